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

// Inbound calls: reported by a dialer (a SIP INVITE to the direct SIP
// dialer, a SIP participant LiveKit let in from an inbound trunk) to a
// number of a voice agent. They are recorded answered (status active, one
// attempt) and ended by the same dialer: found again by their SIP Call-ID
// or LiveKit participant in sip_participant_id.

// StartInboundCall records an answered inbound call: c names the
// organization, agent, caller (PhoneNumber, CallerID), Dialer,
// SIPParticipantID (the key EndInboundCall finds it by), RoomID and
// Metadata. It is stored active, answered at, with one attempt.
func (db *Calls) StartInboundCall(ctx context.Context, c Call, at time.Time) (Call, error) {
	return db.startAnswered(ctx, c, "inbound", at)
}

// startAnswered records a call that is answered as it starts (inbound, or
// a browser's web call): status active, one attempt, call.answered.
func (db *Calls) startAnswered(ctx context.Context, c Call, direction string, at time.Time) (Call, error) {
	c.ID = uuid.NewString()
	c.Direction, c.Status, c.Attempts, c.Priority = direction, CallActive, 1, 5
	if len(c.Metadata) == 0 {
		c.Metadata = []byte("{}")
	}
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		now := sqldb.MS(time.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO calls (id, org_id, agent_id, direction, status, phone_number,
			caller_id, priority, due_at, attempts, metadata, room_id, sip_participant_id, dialer, started_at, answered_at,
			created_at, updated_at) VALUES (?, ?, ?, ?, 'active', ?, ?, 5, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.OrgID, c.AgentID, direction, c.PhoneNumber, c.CallerID, sqldb.MS(at), string(c.Metadata), sqldb.NullStr(c.RoomID),
			sqldb.NullStr(c.SIPParticipantID), sqldb.NullStr(c.Dialer), sqldb.MS(at), sqldb.MS(at), now, now); err != nil {
			return fmt.Errorf("insert %s call: %w", direction, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO call_attempts (call_id, attempt, claim_token, worker_id, status,
			room_id, started_at) VALUES (?, 1, ?, ?, 'active', ?, ?)`, c.ID, direction+"-"+c.ID, direction,
			sqldb.NullStr(c.RoomID), sqldb.MS(at)); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallAnswered, []string{c.ID})
	})
	if err != nil {
		return Call{}, fmt.Errorf("storage: start %s call: %w", direction, err)
	}
	return c, nil
}

// InboundEnd is how an inbound call ended.
type InboundEnd struct {
	Dialer           string // the dialer that reported the call
	SIPParticipantID string // the key it was started with (any when empty)
	RoomID           string // LiveKit: the room (any when empty); one of the two is needed
	Status           string // completed or failed
	Reason           string // failure reason
	EndedAt          time.Time
}

// EndInboundCall ends the active inbound call matching e: status, duration
// from the answer, its attempt too. done is false when none matched (ended
// already, or never recorded).
func (db *Calls) EndInboundCall(ctx context.Context, e InboundEnd) (id string, done bool, err error) {
	if e.SIPParticipantID == "" && e.RoomID == "" {
		return "", false, nil
	}
	q := `id = (SELECT id FROM calls WHERE direction = 'inbound' AND status = 'active' AND dialer = ?`
	args := []any{e.Dialer}
	if e.SIPParticipantID != "" {
		q += " AND sip_participant_id = ?"
		args = append(args, e.SIPParticipantID)
	}
	if e.RoomID != "" {
		q += " AND room_id = ?"
		args = append(args, e.RoomID)
	}
	id, err = db.endAnswered(ctx, q+" LIMIT 1)", args, e.Status, e.Reason, e.EndedAt)
	if err != nil {
		return "", false, fmt.Errorf("storage: end inbound call: %w", err)
	}
	return id, id != "", nil
}

// endAnswered ends the active call that where picks (one started answered:
// inbound or web) and its one attempt with status and reason, its
// duration from the answer, and emits call.ended. It returns "" when
// where picks none (ended already).
func (db *Calls) endAnswered(ctx context.Context, where string, whereArgs []any, status, reason string, at time.Time) (string, error) {
	var id string
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		end := sqldb.MS(at)
		var dur float64
		args := append([]any{status, status, sqldb.NullStr(reason), end, end, sqldb.MS(time.Now())}, whereArgs...)
		err := tx.QueryRowContext(ctx, `UPDATE calls SET status = ?, last_outcome = ?, failure_reason = ?,
			ended_at = max(?, answered_at), duration = max(0, ? - answered_at) / 1000.0, updated_at = ?
			WHERE `+where+` RETURNING id, duration`, args...).Scan(&id, &dur)
		if errors.Is(err, sql.ErrNoRows) {
			id = ""
			return nil
		}
		if err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `UPDATE call_attempts SET status = ?, failure_reason = ?, duration = ?,
			ended_at = (SELECT ended_at FROM calls WHERE id = ?) WHERE call_id = ? AND attempt = 1`,
			status, sqldb.NullStr(reason), dur, id, id); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallEnded, []string{id})
	})
	return id, err
}
