package dial

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/agentd/agentd/storage/callstore"
)

// Scheduler moves calls on when they fall due: new calls (initiated) to
// scheduled or queued, scheduled calls to queued, in one transaction each
// time. It sleeps until the earliest scheduled due time (so a call due at
// 10:00:00 is queued at 10:00:00, not at the next poll), or Poll at most so
// calls stored by another process are seen.
type Scheduler struct {
	db    Deps
	clk   Clock
	log   *slog.Logger
	poll  time.Duration
	onDue func()
	wake  chan struct{}
}

// NewScheduler makes a scheduler; onDue (may be nil) is called after calls
// became queued, to wake the dial queue. clk nil is the real clock, poll 0
// is one second.
func NewScheduler(db Deps, clk Clock, poll time.Duration, log *slog.Logger, onDue func()) *Scheduler {
	if clk == nil {
		clk = RealClock{}
	}
	if poll <= 0 {
		poll = time.Second
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Scheduler{db: db, clk: clk, log: log, poll: poll, onDue: onDue, wake: make(chan struct{}, 1)}
}

// promotingRetry is how soon the scheduler looks again after another
// process held the promotion (PostgreSQL).
const promotingRetry = 20 * time.Millisecond

// Wake makes the scheduler look again now (a call was created or rescheduled).
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Tick promotes what is due at the clock's now and returns how long to wait
// for the next due call (at most Poll).
func (s *Scheduler) Tick(ctx context.Context) (time.Duration, error) {
	now := s.clk.Now()
	n, err := s.db.Calls.PromoteDueCalls(ctx, now)
	if errors.Is(err, callstore.ErrPromoting) {
		return promotingRetry, nil
	}
	if err != nil {
		return s.poll, err
	}
	if n > 0 && s.onDue != nil {
		s.onDue()
	}
	poll := s.db.idlePoll(s.poll)
	next, ok, err := s.db.Calls.NextDue(ctx, callstore.CallScheduled)
	if err != nil || !ok {
		return poll, err
	}
	return min(poll, max(next.Sub(s.clk.Now()), 0)), nil
}

// Run ticks until ctx ends. Besides Wake and the next due time, calls
// stored by other processes wake it (the calls channel); the poll is a
// safety net then (see storage.Stores.IdlePoll).
func (s *Scheduler) Run(ctx context.Context) error {
	for {
		woke := s.db.wake() // before Tick reads: a commit in between is not missed
		d, err := s.Tick(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			s.log.Error("scheduler", "err", err)
		}
		if d > 0 {
			t := s.clk.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-s.wake:
				t.Stop()
			case <-woke:
				t.Stop()
			case <-t.C():
			}
		}
	}
}
