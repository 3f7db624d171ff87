package callstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// Web calls: a voice session from a browser (the dashboard's Talk control,
// the widget's microphone), recorded like an answered inbound call with
// direction web, dialer web and one attempt, and ended by its session.

// StartWebCall records a browser voice session as an active call: c names
// the organization, agent, PhoneNumber (the caller's label) and Metadata.
func (db *Calls) StartWebCall(ctx context.Context, c Call, at time.Time) (Call, error) {
	c.ID = uuid.NewString()
	c.Direction, c.Status, c.Attempts, c.Priority, c.Dialer = "web", CallActive, 1, 5, "web"
	if len(c.Metadata) == 0 {
		c.Metadata = []byte("{}")
	}
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		now := sqldb.MS(time.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO calls (id, org_id, agent_id, direction, status, phone_number,
			caller_id, priority, due_at, attempts, metadata, dialer, started_at, answered_at, created_at, updated_at)
			VALUES (?, ?, ?, 'web', 'active', ?, '', 5, ?, 1, ?, 'web', ?, ?, ?, ?)`,
			c.ID, c.OrgID, c.AgentID, c.PhoneNumber, sqldb.MS(at), string(c.Metadata), sqldb.MS(at), sqldb.MS(at), now, now); err != nil {
			return fmt.Errorf("insert web call: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO call_attempts (call_id, attempt, claim_token, worker_id, status,
			started_at) VALUES (?, 1, ?, 'web', 'active', ?)`, c.ID, "web-"+c.ID, sqldb.MS(at)); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallAnswered, []string{c.ID})
	})
	if err != nil {
		return Call{}, fmt.Errorf("storage: start web call: %w", err)
	}
	return c, nil
}

// EndWebCall ends an active web call with status completed or failed and
// its duration from the answer; a call ended already stays as it is.
func (db *Calls) EndWebCall(ctx context.Context, id, status, reason string, at time.Time) error {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		end := sqldb.MS(at)
		var dur float64
		err := tx.QueryRowContext(ctx, `UPDATE calls SET status = ?, last_outcome = ?, failure_reason = ?,
			ended_at = max(?, answered_at), duration = max(0, ? - answered_at) / 1000.0, updated_at = ?
			WHERE id = ? AND direction = 'web' AND status = 'active' RETURNING duration`,
			status, status, sqldb.NullStr(reason), end, end, sqldb.MS(time.Now()), id).Scan(&dur)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `UPDATE call_attempts SET status = ?, failure_reason = ?, duration = ?,
			ended_at = ? WHERE call_id = ? AND attempt = 1`, status, sqldb.NullStr(reason), dur, end, id); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallEnded, []string{id})
	})
	if err != nil {
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
		rows, err := tx.QueryContext(ctx, `UPDATE calls SET status = 'failed', last_outcome = 'failed',
			failure_reason = 'interrupted', ended_at = answered_at + ?, duration = ? / 1000.0, updated_at = ?
			WHERE direction = 'web' AND status = 'active' AND started_at < ? RETURNING id`,
			limit.Milliseconds(), limit.Milliseconds(), sqldb.MS(time.Now()), sqldb.MS(before))
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
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
