package dial

import (
	"context"
	"time"

	"github.com/agentd/agentd/storage/callstore"
)

// The queue's side of the trunk's dial budget (callstore.Budget), which
// every process on the database shares: what a claim asks for, and what
// becomes of a call claimed ahead of its slot when its batch is paused.

// budget is the trunk's dial budget for a claim at now: the pace (stretched
// by the pacer after carrier pushback) and the cap on calls at once, both
// kept in the database and so shared by every process dialling from it.
func (q *Queue) budget(now time.Time) *callstore.Budget {
	iv := q.interval * time.Duration(q.pacer.slowdown(now))
	// Claiming up to 200 ms ahead hides the claim's wait for the
	// database's writer (other processes' writes) from the pace.
	return &callstore.Budget{Trunk: q.cfg.Dialer.Name(), Interval: iv, Lead: 200 * time.Millisecond, MaxActive: q.cfg.MaxConcurrent}
}

// pausedMeanwhile gives back a call claimed ahead of its slot whose batch
// was paused while it waited, as the pause does with the batch's queued
// calls: it waits, scheduled, for the resume. A pause thus stops a batch's
// dials at once, claimed or not.
func (q *Queue) pausedMeanwhile(c callstore.Call, slot callstore.Slot) bool {
	if c.BatchID == "" {
		return false
	}
	ctx := context.Background()
	paused, err := q.db.Calls.BatchPaused(ctx, c.BatchID)
	if err != nil || !paused {
		return false
	}
	now := q.clk.Now()
	if _, err := q.db.Calls.UndoClaim(ctx, c.ID, c.ClaimToken, callstore.Undo{Status: callstore.CallScheduled, DueAt: c.DueAt,
		At: now, Slot: slot}); err != nil {
		q.log.Error("dial queue: give back a paused batch's call", "call", c.ID, "err", err)
		return false
	}
	q.log.Info("call of a paused batch given back", "call", c.ID, "batch", c.BatchID)
	return true
}
