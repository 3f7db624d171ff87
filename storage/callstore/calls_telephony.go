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

// ErrCallNotDialled is returned (wrapping sqldb.ErrConflict) when a result is
// written for a call no attempt of which was ever dialled.
var ErrCallNotDialled = fmt.Errorf("call not dialled yet: %w", sqldb.ErrConflict)

// CallResult is what the voice agent reported about a call. Nil fields are
// "not given": SaveCallResult keeps the stored value.
type CallResult struct {
	CallID     string
	Summary    *string
	Transcript json.RawMessage // JSON array of {role, text, at}; nil = not given
	Outcome    *string
	// Metadata (input only) is a JSON object merged (RFC 7396 merge patch)
	// into the call's metadata under "result"; nil = not given.
	Metadata  json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SaveCallResult records the voice agent's result for a call of the
// organization: each given field replaces the stored one, metadata is merged
// into metadata.result. A summary is also written to the call's summary
// column (the call list shows it; the record prefers the stored result's).
// Another organization's call is sqldb.ErrNotFound; a call never dialled is
// ErrCallNotDialled.
func (db *Calls) SaveCallResult(ctx context.Context, orgID string, r CallResult, now time.Time) error {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var attempts int
		err := tx.QueryRowContext(ctx, "SELECT attempts FROM calls WHERE id = ? AND org_id = ?", r.CallID, orgID).Scan(&attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("call %q: %w", r.CallID, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if attempts == 0 {
			return fmt.Errorf("call %q: %w", r.CallID, ErrCallNotDialled)
		}
		var summary, outcome any
		if r.Summary != nil {
			summary = *r.Summary
		}
		if r.Outcome != nil {
			outcome = *r.Outcome
		}
		at := sqldb.MS(now)
		if _, err := tx.ExecContext(ctx, `INSERT INTO call_results (call_id, summary, transcript, outcome, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (call_id) DO UPDATE SET summary = coalesce(excluded.summary, call_results.summary),
				transcript = coalesce(excluded.transcript, call_results.transcript),
				outcome = coalesce(excluded.outcome, call_results.outcome),
				updated_at = excluded.updated_at`,
			r.CallID, summary, sqldb.NullJSON(r.Transcript), outcome, at, at); err != nil {
			return err
		}
		if r.Metadata != nil {
			// A non-object metadata.result (set by the caller) is replaced.
			q := sqldb.PerDialect[string]{
				SQLite: `UPDATE calls SET metadata = json_set(metadata, '$.result',
				json_patch(CASE WHEN json_type(metadata, '$.result') = 'object' THEN json_extract(metadata, '$.result')
					ELSE '{}' END, json(?))), updated_at = ? WHERE id = ?`,
				// jsonb: keys come back in jsonb's order
				Postgres: `UPDATE calls SET metadata = jsonb_set(metadata::jsonb, '{result}',
				json_patch(CASE WHEN jsonb_typeof(metadata::jsonb -> 'result') = 'object' THEN metadata::jsonb -> 'result'
					ELSE '{}' END, ?::jsonb))::text, updated_at = ? WHERE id = ?`,
			}.For(db.c.Dialect())
			if _, err := tx.ExecContext(ctx, q, string(r.Metadata), at, r.CallID); err != nil {
				return err
			}
		}
		if r.Summary != nil {
			if _, err := tx.ExecContext(ctx, "UPDATE calls SET summary = ?, updated_at = ? WHERE id = ?",
				*r.Summary, at, r.CallID); err != nil {
				return err
			}
		}
		if r.Transcript != nil { // a transcript queues the call's analysis (issue 24)
			if err := analysisstore.EnqueueCall(ctx, tx, r.CallID, now); err != nil {
				return err
			}
		}
		return db.emitCalls(ctx, tx, EventCallResult, []string{r.CallID})
	})
	if err != nil {
		return fmt.Errorf("storage: save call result: %w", err)
	}
	return nil
}

// GetCallResult reads the stored result of a call (the caller has already
// checked the call's organization); sqldb.ErrNotFound when none was written.
func (db *Calls) GetCallResult(ctx context.Context, callID string) (CallResult, error) {
	var res resultScan
	err := db.r.QueryRowContext(ctx, `SELECT summary, transcript, outcome, created_at, updated_at
		FROM call_results WHERE call_id = ?`, callID).Scan(res.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return CallResult{}, fmt.Errorf("result of call %q: %w", callID, sqldb.ErrNotFound)
	}
	if err != nil {
		return CallResult{}, fmt.Errorf("storage: call result: %w", err)
	}
	r := res.result(callID)
	if err := withLines(ctx, db.r, &r); err != nil {
		return CallResult{}, fmt.Errorf("storage: call result: %w", err)
	}
	return r, nil
}

// resultScan receives a call_results row's summary, transcript, outcome,
// created_at and updated_at, in that order (dest), and makes the
// CallResult of them.
type resultScan struct {
	summary, transcript, outcome sql.NullString
	created, updated             sql.NullInt64
}

func (s *resultScan) dest() []any {
	return []any{&s.summary, &s.transcript, &s.outcome, &s.created, &s.updated}
}

func (s *resultScan) result(callID string) CallResult {
	r := CallResult{CallID: callID, CreatedAt: sqldb.FromMS(s.created.Int64), UpdatedAt: sqldb.FromMS(s.updated.Int64)}
	if s.summary.Valid {
		r.Summary = &s.summary.String
	}
	if s.transcript.Valid {
		r.Transcript = json.RawMessage(s.transcript.String)
	}
	if s.outcome.Valid {
		r.Outcome = &s.outcome.String
	}
	return r
}

// CompleteCallFromWebhook ends an answered call whose end was reported by a
// LiveKit webhook that no dialling process in this one took (the call may be
// dialled by another agentd on the same database, or by none any more). It
// changes the call only while it is still active on that attempt in that
// room: completed, duration from answer to endedAt, the claim released (the
// dialling process, if alive, sees its claim gone and hangs up). A call
// already final, re-dialled or elsewhere is left alone: done is false.
func (db *Calls) CompleteCallFromWebhook(ctx context.Context, callID string, attempt int, roomID string, endedAt time.Time) (done bool, err error) {
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		end := sqldb.MS(endedAt)
		var dur float64
		var endAt int64
		// endedAt has LiveKit's second precision: never before the answer.
		err := tx.QueryRowContext(ctx, `UPDATE calls SET status = 'completed', last_outcome = 'completed',
			failure_reason = NULL, ended_at = max(?, coalesce(answered_at, ?)),
			duration = max(0, ? - coalesce(answered_at, ?)) / 1000.0,
			claim_token = NULL, worker_id = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND status = 'active' AND attempts = ? AND room_id = ?
			RETURNING duration, ended_at`,
			end, end, end, end, sqldb.MS(time.Now()), callID, attempt, roomID).Scan(&dur, &endAt)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		done = true
		if _, err = tx.ExecContext(ctx, `UPDATE call_attempts SET status = 'completed', duration = ?, ended_at = ?
			WHERE call_id = ? AND attempt = ? AND status = 'active'`, dur, endAt, callID, attempt); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallEnded, []string{callID})
	})
	if err != nil {
		return false, fmt.Errorf("storage: complete call from webhook: %w", err)
	}
	return done, nil
}
