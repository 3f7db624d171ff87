package callstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// Call statuses as stored.
const (
	CallInitiated  = "initiated"
	CallScheduled  = "scheduled"
	CallQueued     = "queued"
	CallConnecting = "connecting"
	CallRinging    = "ringing"
	CallActive     = "active"
	CallCompleted  = "completed"
	CallFailed     = "failed"
	CallCancelled  = "cancelled"
	CallNoAnswer   = "no_answer"
	CallBusy       = "busy"
)

// CallFinal reports whether status is a final call status.
func CallFinal(status string) bool {
	switch status {
	case CallCompleted, CallFailed, CallCancelled, CallNoAnswer, CallBusy:
		return true
	}
	return false
}

// liveSQL lists the statuses of an attempt being dialled.
const liveSQL = "('connecting', 'ringing', 'active')"

// Call is one call record. Empty strings are stored as NULL for the optional
// text columns; RetryPolicy and Window are the dial package's JSON (storage
// does not interpret them).
type Call struct {
	ID               string
	OrgID            string
	AgentID          string
	Direction        string // outbound (default) or inbound
	Status           string
	PhoneNumber      string
	CallerID         string
	ContactName      string
	ContactEmail     string
	Priority         int
	ScheduledAt      *time.Time // first attempt's time as asked or computed; nil = immediate
	DueAt            time.Time  // when the next attempt may start
	Attempts         int
	MaxRetries       int
	RetryPolicy      json.RawMessage // nil = no retry
	Window           json.RawMessage // nil = any time
	Metadata         json.RawMessage // object
	CallMetadata     json.RawMessage // object or nil
	BatchID          string
	RoomID           string
	JobID            string
	SIPParticipantID string
	SIPCode          int
	Duration         *float64 // seconds
	Summary          string
	FailureReason    string
	LastOutcome      string
	Dialer           string
	ClaimToken       string
	WorkerID         string
	LeaseUntil       *time.Time
	StartedAt        *time.Time
	AnsweredAt       *time.Time
	EndedAt          *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time

	// From the agent, filled by reads.
	AgentName         string
	AgentType         string
	AgentInstructions string
}

const callColumns = `c.id, c.org_id, c.agent_id, c.direction, c.status, c.phone_number, c.caller_id, c.contact_name,
	c.contact_email, c.priority, c.scheduled_at, c.due_at, c.attempts, c.max_retries, c.retry_config, c.call_window,
	c.metadata, c.call_metadata, c.batch_id, c.room_id, c.job_id, c.sip_participant_id, c.sip_code, c.duration,
	c.summary, c.failure_reason, c.last_outcome, c.dialer, c.claim_token, c.worker_id, c.lease_until, c.started_at,
	c.answered_at, c.ended_at, c.created_at, c.updated_at, coalesce(a.name, ''), coalesce(a.type, ''),
	coalesce(a.instructions, '')`

const callFrom = " FROM calls c LEFT JOIN agents a ON a.id = c.agent_id"

func scanCall(s sqldb.Scanner) (Call, error) {
	var c Call
	var contactName, contactEmail, retry, window, callMeta, batch, room, job, sipPID, summary, reason, last, dialer,
		token, worker sql.NullString
	var sipCode sql.NullInt64
	var duration sql.NullFloat64
	var scheduled, lease, started, answered, ended sql.NullInt64
	var due, created, updated int64
	var meta string
	err := s.Scan(&c.ID, &c.OrgID, &c.AgentID, &c.Direction, &c.Status, &c.PhoneNumber, &c.CallerID, &contactName,
		&contactEmail, &c.Priority, &scheduled, &due, &c.Attempts, &c.MaxRetries, &retry, &window,
		&meta, &callMeta, &batch, &room, &job, &sipPID, &sipCode, &duration,
		&summary, &reason, &last, &dialer, &token, &worker, &lease, &started,
		&answered, &ended, &created, &updated, &c.AgentName, &c.AgentType, &c.AgentInstructions)
	if err != nil {
		return Call{}, err
	}
	c.ContactName, c.ContactEmail = contactName.String, contactEmail.String
	c.ScheduledAt, c.DueAt = sqldb.OptMS(scheduled), sqldb.FromMS(due)
	if retry.Valid {
		c.RetryPolicy = json.RawMessage(retry.String)
	}
	if window.Valid {
		c.Window = json.RawMessage(window.String)
	}
	c.Metadata = json.RawMessage(meta)
	if callMeta.Valid {
		c.CallMetadata = json.RawMessage(callMeta.String)
	}
	c.BatchID, c.RoomID, c.JobID, c.SIPParticipantID = batch.String, room.String, job.String, sipPID.String
	c.SIPCode = int(sipCode.Int64)
	if duration.Valid {
		d := duration.Float64
		c.Duration = &d
	}
	c.Summary, c.FailureReason, c.LastOutcome, c.Dialer = summary.String, reason.String, last.String, dialer.String
	c.ClaimToken, c.WorkerID = token.String, worker.String
	c.LeaseUntil, c.StartedAt, c.AnsweredAt, c.EndedAt = sqldb.OptMS(lease), sqldb.OptMS(started), sqldb.OptMS(answered), sqldb.OptMS(ended)
	c.CreatedAt, c.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return c, nil
}

// CreateCalls stores new calls in one transaction (a batch is all stored or
// none). IDs, times and defaults are set here; the created calls are
// returned in order. Status must be initiated or queued.
func (db *Calls) CreateCalls(ctx context.Context, calls []Call) ([]Call, error) {
	return db.createCalls(ctx, calls, nil)
}

// createCalls is CreateCalls; also, when set, runs first in the same
// transaction (CreateBatch stores the batch row with its calls).
func (db *Calls) createCalls(ctx context.Context, calls []Call, also func(tx *sql.Tx) error) ([]Call, error) {
	now := time.Now().UTC()
	for i := range calls {
		c := &calls[i]
		// Version 7: ids sort in creation order, so the calls of a batch
		// (one created_at) list in the order they were given.
		c.ID = uuid.Must(uuid.NewV7()).String()
		c.CreatedAt, c.UpdatedAt = now, now
		if c.Direction == "" {
			c.Direction = "outbound"
		}
		if c.Status == "" {
			c.Status = CallInitiated
		}
		if c.DueAt.IsZero() {
			c.DueAt = now
		}
		if len(c.Metadata) == 0 {
			c.Metadata = json.RawMessage("{}")
		}
	}
	// Multi-row INSERTs: one statement per chunk instead of per call keeps a
	// 1,000-call batch to a few statement journals (the stats triggers make
	// every statement keep one).
	const chunk = 400 // 21 parameters each, under SQLite's 32766
	const row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	insert := func(n int) string {
		return `INSERT INTO calls (id, org_id, agent_id, direction, status, phone_number,
				caller_id, contact_name, contact_email, priority, scheduled_at, due_at, max_retries, retry_config,
				call_window, metadata, call_metadata, batch_id, started_at, created_at, updated_at)
				VALUES ` + row + strings.Repeat(", "+row, n-1)
	}
	var full *sql.Stmt // a full chunk's statement, parsed once: parsing it costs a tenth of a batch
	if len(calls) >= chunk {
		sts, err := db.c.WriterStmts(ctx, insert(chunk))
		if err != nil {
			return nil, fmt.Errorf("storage: insert calls: %w", err)
		}
		full = sts[0]
	}
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		for lo := 0; lo < len(calls); lo += chunk {
			part := calls[lo:min(lo+chunk, len(calls))]
			args := make([]any, 0, 21*len(part))
			for _, c := range part {
				args = append(args, c.ID, c.OrgID, c.AgentID, c.Direction, c.Status, c.PhoneNumber,
					c.CallerID, sqldb.NullStr(c.ContactName), sqldb.NullStr(c.ContactEmail), c.Priority, sqldb.NullMS(c.ScheduledAt),
					sqldb.MS(c.DueAt), c.MaxRetries, sqldb.NullJSON(c.RetryPolicy), sqldb.NullJSON(c.Window), string(c.Metadata),
					sqldb.NullJSON(c.CallMetadata), sqldb.NullStr(c.BatchID), sqldb.NullMS(c.StartedAt), sqldb.MS(now), sqldb.MS(now))
			}
			var err error
			if len(part) == chunk {
				_, err = tx.StmtContext(ctx, full).ExecContext(ctx, args...)
			} else {
				_, err = tx.ExecContext(ctx, insert(len(part)), args...)
			}
			if err != nil {
				return fmt.Errorf("storage: insert calls: %w", err)
			}
		}
		return db.emitCalls(ctx, tx, EventCallQueued, idsWithStatus(calls, CallQueued))
	})
	if err != nil {
		return nil, err
	}
	return calls, nil
}

// GetCall reads one call of the organization; another organization's call
// is sqldb.ErrNotFound, like a missing one.
func (db *Calls) GetCall(ctx context.Context, orgID, id string) (Call, error) {
	row := db.r.QueryRowContext(ctx, "SELECT "+callColumns+callFrom+" WHERE c.id = ? AND c.org_id = ?", id, orgID)
	c, err := scanCall(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Call{}, fmt.Errorf("call %q: %w", id, sqldb.ErrNotFound)
	}
	return c, err
}

// CallFilter selects and orders calls for ListCalls. Empty fields do not
// filter.
type CallFilter struct {
	OrgID       string
	Statuses    []string
	AgentID     string
	Direction   string
	PhoneNumber string
	BatchID     string
	From, To    *time.Time // createdAt range, inclusive
	SortBy      string     // createdAt (default), scheduledAt, priority
	Desc        bool
	Limit       int
	Offset      int
}

// ListCalls returns one page of the organization's calls and the number of
// calls matching the filter.
func (db *Calls) ListCalls(ctx context.Context, f CallFilter) ([]Call, int, error) {
	where := []string{"c.org_id = ?"}
	args := []any{f.OrgID}
	if len(f.Statuses) > 0 {
		where = append(where, "c.status IN (?"+strings.Repeat(", ?", len(f.Statuses)-1)+")")
		for _, s := range f.Statuses {
			args = append(args, s)
		}
	}
	if f.AgentID != "" {
		where, args = append(where, "c.agent_id = ?"), append(args, f.AgentID)
	}
	if f.Direction != "" {
		where, args = append(where, "c.direction = ?"), append(args, f.Direction)
	}
	if f.PhoneNumber != "" {
		where, args = append(where, "c.phone_number = ?"), append(args, f.PhoneNumber)
	}
	if f.BatchID != "" {
		where, args = append(where, "c.batch_id = ?"), append(args, f.BatchID)
	}
	if f.From != nil {
		where, args = append(where, "c.created_at >= ?"), append(args, sqldb.MS(*f.From))
	}
	if f.To != nil {
		where, args = append(where, "c.created_at <= ?"), append(args, sqldb.MS(*f.To))
	}
	cond := " WHERE " + strings.Join(where, " AND ")
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM calls c"+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("storage: count calls: %w", err)
	}
	dir := "ASC"
	if f.Desc {
		dir = "DESC"
	}
	var order string
	switch f.SortBy {
	case "scheduledAt":
		// Immediate calls (no scheduledAt) sort by their due time.
		order = "coalesce(c.scheduled_at, c.due_at) " + dir + ", c.created_at " + dir
	case "priority":
		order = "c.priority " + dir + ", c.created_at " + dir
	default:
		order = "c.created_at " + dir
		if f.BatchID != "" {
			// A batch holds at most 1,000 calls: take them from the batch
			// index and sort them, rather than walk every call in order.
			order = "+c.created_at " + dir
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+callColumns+callFrom+cond+" ORDER BY "+order+", c.id "+dir+
		" LIMIT ? OFFSET ?", append(args, limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("storage: list calls: %w", err)
	}
	out, err := sqldb.Collect(rows, scanCall)
	return out, total, err
}

// CallAttempt is one dial attempt of a call.
type CallAttempt struct {
	Attempt       int
	Status        string
	FailureReason string
	SIPCode       int
	RoomID        string
	Duration      *float64
	StartedAt     time.Time
	EndedAt       *time.Time
}

// CallAttempts lists a call's attempts, first first.
func (db *Calls) CallAttempts(ctx context.Context, callID string) ([]CallAttempt, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT attempt, status, failure_reason, sip_code, room_id, duration,
		started_at, ended_at FROM call_attempts WHERE call_id = ? ORDER BY attempt`, callID)
	if err != nil {
		return nil, fmt.Errorf("storage: call attempts: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (CallAttempt, error) { return scanAttempt(sc) })
}

// scanAttempt reads an attempt's columns (attempt, status, failure_reason,
// sip_code, room_id, duration, started_at, ended_at) after the columns lead
// points at.
func scanAttempt(sc sqldb.Scanner, lead ...any) (CallAttempt, error) {
	var a CallAttempt
	var reason, room sql.NullString
	var code sql.NullInt64
	var dur sql.NullFloat64
	var started int64
	var ended sql.NullInt64
	if err := sc.Scan(append(lead, &a.Attempt, &a.Status, &reason, &code, &room, &dur, &started, &ended)...); err != nil {
		return a, err
	}
	a.FailureReason, a.SIPCode, a.RoomID = reason.String, int(code.Int64), room.String
	if dur.Valid {
		d := dur.Float64
		a.Duration = &d
	}
	a.StartedAt, a.EndedAt = sqldb.FromMS(started), sqldb.OptMS(ended)
	return a, nil
}

// ErrCallFinished is returned (wrapping sqldb.ErrConflict) when cancelling a call
// that already ended.
var ErrCallFinished = fmt.Errorf("call already finished: %w", sqldb.ErrConflict)

// CancelCall cancels a call that has not ended: initiated, scheduled and
// queued calls never dial; a connecting, ringing or active one is marked
// cancelled here and its dialing worker hangs up when it sees the status
// (at once in-process, within a heartbeat from another process). It returns
// the call as updated and the status it had before.
func (db *Calls) CancelCall(ctx context.Context, orgID, id string, now time.Time) (Call, string, error) {
	var prev string
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT status FROM calls WHERE id = ? AND org_id = ?", id, orgID).Scan(&prev)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("call %q: %w", id, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if CallFinal(prev) {
			return fmt.Errorf("call %q is %s: %w", id, prev, ErrCallFinished)
		}
		// claim_token and lease stay: the dialing worker still owns the
		// attempt until it has hung up and recorded it.
		if _, err = tx.ExecContext(ctx, `UPDATE calls SET status = 'cancelled', ended_at = ?, updated_at = ?
			WHERE id = ?`, sqldb.MS(now), sqldb.MS(now), id); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallEnded, []string{id})
	})
	if err != nil {
		return Call{}, prev, err
	}
	c, err := db.GetCall(ctx, orgID, id)
	return c, prev, err
}
