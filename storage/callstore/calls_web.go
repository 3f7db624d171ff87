package callstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Web calls: a voice session from a browser (the dashboard's Talk control,
// the widget's microphone), recorded like an answered inbound call with
// direction web, dialer web and one attempt, and ended by its session.

// StartWebCall records a browser voice session as an active call: c names
// the organization, agent, PhoneNumber (the caller's label) and Metadata.
func (db *Calls) StartWebCall(ctx context.Context, c Call, at time.Time) (Call, error) {
	c.Dialer, c.CallerID, c.RoomID, c.SIPParticipantID = "web", "", "", ""
	return db.startAnswered(ctx, c, "web", at)
}

// EndWebCall ends an active web call with status completed or failed and
// its duration from the answer; a call ended already stays as it is.
func (db *Calls) EndWebCall(ctx context.Context, id, status, reason string, at time.Time) error {
	if _, err := db.endAnswered(ctx, `id = ? AND direction = 'web' AND status = 'active'`, []any{id}, status, reason, at); err != nil {
		return fmt.Errorf("storage: end web call: %w", err)
	}
	return nil
}

// WebSeconds is how long an agent's web calls started since since have
// lasted (the ones still active count until now), for the widget's daily
// cap of voice minutes.
func (db *Calls) WebSeconds(ctx context.Context, agentID string, since, now time.Time) (float64, error) {
	var s float64
	err := db.c.ReadRow(ctx, `SELECT coalesce(sum(CASE WHEN status = 'active'
		THEN max(0, ? - answered_at) / 1000.0 ELSE coalesce(duration, 0) END), 0)
		FROM calls WHERE agent_id = ? AND direction = 'web' AND started_at >= ?`,
		sqldb.MS(now), agentID, sqldb.MS(since)).Scan(&s)
	if err != nil {
		return 0, fmt.Errorf("storage: web call seconds: %w", err)
	}
	return s, nil
}

// EndStaleWebCalls fails the web calls still active that started before
// before: their process stopped mid-session (a session cannot outlast its
// maximum duration). Each is ended at its answer plus limit, which is what
// counts against the day's voice minutes.
func (db *Calls) EndStaleWebCalls(ctx context.Context, before time.Time, limit time.Duration) (int, error) {
	var n int
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		ids, err := queryIDs(ctx, tx, `UPDATE calls SET status = 'failed', last_outcome = 'failed',
			failure_reason = 'interrupted', ended_at = answered_at + ?, duration = ? / 1000.0, updated_at = ?
			WHERE direction = 'web' AND status = 'active' AND started_at < ? RETURNING id`,
			limit.Milliseconds(), limit.Milliseconds(), sqldb.MS(time.Now()), sqldb.MS(before))
		if err != nil {
			return err
		}
		n = len(ids)
		if n == 0 {
			return nil
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE call_attempts SET status = 'failed', failure_reason = 'interrupted',
				duration = ? / 1000.0, ended_at = (SELECT ended_at FROM calls WHERE id = ?) WHERE call_id = ? AND attempt = 1`,
				limit.Milliseconds(), id, id); err != nil {
				return err
			}
		}
		return db.emitCalls(ctx, tx, EventCallEnded, ids)
	})
	if err != nil {
		return 0, fmt.Errorf("storage: end stale web calls: %w", err)
	}
	return n, nil
}
