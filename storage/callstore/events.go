package callstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Event types the calls store writes, in the transaction of the change
// each reports (package storage re-exports them).
const (
	EventCallQueued         = "call.queued"
	EventCallRinging        = "call.ringing"
	EventCallAnswered       = "call.answered"
	EventCallRetryScheduled = "call.retry_scheduled"
	EventCallEnded          = "call.ended"
	EventCallResult         = "call.result"
	EventBatchCompleted     = "batch.completed"
)

// CallSnapshot is a call as its transaction left it, with its attempts and
// the voice agent's result (nil when none): what GET /api/v1/calls/{id} reads.
type CallSnapshot struct {
	Call     Call
	Attempts []CallAttempt
	Result   *CallResult
}

// BatchSummary is a batch whose every call is final.
type BatchSummary struct {
	BatchID   string
	OrgID     string
	AgentID   string
	Name      string // the campaign's name ("" for a batch without one)
	Total     int
	ByStatus  map[string]int // final status -> calls
	CreatedAt time.Time      // first call's creation
	EndedAt   time.Time      // the last call's end (this transition)
}

// callEventType is the event a call's new status reports ("" for none).
func callEventType(status string, retry bool) string {
	switch {
	case retry:
		return EventCallRetryScheduled
	case status == CallQueued:
		return EventCallQueued
	case status == CallRinging:
		return EventCallRinging
	case status == CallActive:
		return EventCallAnswered
	case CallFinal(status):
		return EventCallEnded
	}
	return ""
}

// emitCalls writes one event of type typ for each call, a snapshot read in tx,
// and batch.completed for every batch a call.ended finished.
func (db *Calls) emitCalls(ctx context.Context, tx *sql.Tx, typ string, ids []string) error {
	if typ == "" || len(ids) == 0 {
		return nil
	}
	snaps, err := callSnapshots(ctx, tx, ids)
	if err != nil {
		return err
	}
	evs := make([]sqldb.PendingEvent, 0, len(snaps))
	var batches [][2]string // batch, the call that ended
	for _, s := range snaps {
		evs = append(evs, sqldb.PendingEvent{Type: typ, Subject: "call:" + s.Call.ID, OrgID: s.Call.OrgID, Data: s,
			Version: SnapshotVersion})
		if typ == EventCallEnded && s.Call.BatchID != "" {
			batches = append(batches, [2]string{s.Call.BatchID, s.Call.ID})
		}
	}
	if _, err := db.c.InsertEvents(ctx, tx, evs); err != nil {
		return err
	}
	if typ == EventCallEnded { // a call that ends with a transcript is analysed (issue 24)
		if err := analysisstore.EnqueueEndedCalls(ctx, tx, ids, time.Now()); err != nil {
			return err
		}
	}
	return db.emitBatchesDone(ctx, tx, batches)
}

// callSnapshots reads calls with their attempts and results inside tx, in
// the order of ids.
func callSnapshots(ctx context.Context, tx *sql.Tx, ids []string) ([]CallSnapshot, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// One call (a dialled call's every step) is read by its key: the
	// planner guesses a hundred ids in a JSON list, and a plan made so on a
	// new install's small tables (a hash join over the whole table) is kept
	// as they grow.
	in, list := " = ?", ids[0]
	if len(ids) > 1 {
		b, err := json.Marshal(ids)
		if err != nil {
			return nil, err
		}
		in, list = " IN (SELECT value FROM json_each(?))", string(b)
	}
	// The result (at most one per call) comes with the call: one round
	// trip fewer for each of the several events a dialled call writes.
	rows, err := tx.QueryContext(ctx, "SELECT "+callColumns+`, r.call_id, r.summary, r.transcript, r.outcome, r.created_at,
		r.updated_at`+callFrom+" LEFT JOIN call_results r ON r.call_id = c.id WHERE c.id"+in, list)
	if err != nil {
		return nil, fmt.Errorf("storage: event calls: %w", err)
	}
	byID := make(map[string]*CallSnapshot, len(ids))
	for rows.Next() {
		var resID sql.NullString
		var res resultScan
		c, err := scanCall(withExtra{rows, append([]any{&resID}, res.dest()...)})
		if err != nil {
			rows.Close()
			return nil, err
		}
		snap := &CallSnapshot{Call: c, Attempts: []CallAttempt{}}
		if resID.Valid {
			r := res.result(resID.String)
			snap.Result = &r
		}
		byID[c.ID] = snap
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, s := range byID {
		if s.Result != nil {
			if err := withLines(ctx, tx, s.Result); err != nil {
				return nil, err
			}
		}
	}
	if err := scanAttemptsInto(ctx, tx, in, list, byID); err != nil {
		return nil, err
	}
	out := make([]CallSnapshot, 0, len(ids))
	for _, id := range ids {
		if s := byID[id]; s != nil {
			out = append(out, *s)
		}
	}
	return out, nil
}

// withExtra scans a row whose first columns are what the caller's scan
// expects and the rest go to extra.
type withExtra struct {
	s     sqldb.Scanner
	extra []any
}

func (w withExtra) Scan(dest ...any) error { return w.s.Scan(append(dest, w.extra...)...) }

func scanAttemptsInto(ctx context.Context, tx *sql.Tx, in, list string, byID map[string]*CallSnapshot) error {
	rows, err := tx.QueryContext(ctx, `SELECT call_id, attempt, status, failure_reason, sip_code, room_id, duration,
		started_at, ended_at FROM call_attempts WHERE call_id`+in+` ORDER BY call_id, attempt`, list)
	if err != nil {
		return fmt.Errorf("storage: event call attempts: %w", err)
	}
	return sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var id string
		a, err := scanAttempt(sc, &id)
		if s := byID[id]; s != nil && err == nil {
			s.Attempts = append(s.Attempts, a)
		}
		return err
	})
}

// emitBatchesDone writes batch.completed for each batch all of whose calls
// are now final. A final call never leaves its status, so this holds at
// exactly one transition per batch. Its subject is the call whose end
// completed the batch, so it reaches each endpoint after that call.ended.
func (db *Calls) emitBatchesDone(ctx context.Context, tx *sql.Tx, batches [][2]string) error {
	seen := map[string]bool{}
	var evs []sqldb.PendingEvent
	for _, bc := range batches {
		b := bc[0]
		if seen[b] {
			continue
		}
		seen[b] = true
		// Most call ends leave their batch open: one index probe says so,
		// instead of summing every call of the batch at each call's end.
		var open bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM calls WHERE batch_id = ? AND status IN "+openSQL+")",
			b).Scan(&open); err != nil {
			return fmt.Errorf("storage: batch open: %w", err)
		}
		if open {
			continue
		}
		s := BatchSummary{BatchID: b, ByStatus: map[string]int{}}
		rows, err := tx.QueryContext(ctx, `SELECT status, count(*), min(org_id), min(agent_id), min(created_at),
			max(coalesce(ended_at, updated_at)) FROM calls WHERE batch_id = ? GROUP BY status`, b)
		if err != nil {
			return fmt.Errorf("storage: batch summary: %w", err)
		}
		if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
			var st, org, agent string
			var n int
			var created, ended int64
			if err := sc.Scan(&st, &n, &org, &agent, &created, &ended); err != nil {
				return err
			}
			s.ByStatus[st] += n
			s.Total += n
			s.OrgID, s.AgentID = org, agent
			if c := sqldb.FromMS(created); s.CreatedAt.IsZero() || c.Before(s.CreatedAt) {
				s.CreatedAt = c
			}
			if e := sqldb.FromMS(ended); e.After(s.EndedAt) {
				s.EndedAt = e
			}
			return nil
		}); err != nil {
			return err
		}
		if s.Total == 0 {
			continue
		}
		// A batch of seeded history has no row: no name.
		if err := tx.QueryRowContext(ctx, "SELECT name FROM call_batches WHERE id = ?", b).Scan(&s.Name); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("storage: batch name: %w", err)
		}
		evs = append(evs, sqldb.PendingEvent{Type: EventBatchCompleted, Subject: "call:" + bc[1], OrgID: s.OrgID, Data: s,
			Version: SnapshotVersion})
	}
	_, err := db.c.InsertEvents(ctx, tx, evs)
	return err
}

// idsWithStatus lists the ids of the calls in status.
func idsWithStatus(calls []Call, status string) []string {
	var ids []string
	for _, c := range calls {
		if c.Status == status {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// queryIDs runs a statement returning one id per row (UPDATE ... RETURNING id).
func queryIDs(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqldb.Collect(rows, sqldb.ScanOne[string])
}
