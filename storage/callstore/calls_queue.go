package callstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// The dial queue's side of the calls table: promotion of due calls, then,
// once an attempt is claimed (calls_claim.go), its progress, settling,
// leases and recovery.
// Every method that touches a claimed attempt is guarded by its claim_token,
// so a worker that lost its claim (the call was cancelled, or the attempt
// was settled as interrupted after its lease ran out) can change nothing.
// That guard, re-checked by PostgreSQL on the row's latest version, is
// what lets them run at READ COMMITTED there (sqldb.WriteClaim): under
// SERIALIZABLE the heartbeat's lease renewal and the progress writes of
// the same calls failed each other all the time.

// PromoteDueCalls moves new calls on (initiated -> scheduled when due later,
// queued when due) and scheduled calls that fell due to queued, all in one
// transaction. It returns how many calls became queued.
func (db *Calls) PromoteDueCalls(ctx context.Context, now time.Time) (int64, error) {
	// A read first: the scheduler calls this every poll, and most polls
	// find nothing to do; only real work takes the writer.
	var work bool
	if err := db.c.ReadRowFresh(ctx, dueWorkSQL.For(db.c.Dialect()), sqldb.MS(now)).Scan(&work); err != nil {
		return 0, fmt.Errorf("storage: due calls: %w", err)
	}
	if !work {
		return 0, nil
	}
	var queued int64
	// At READ COMMITTED on PostgreSQL: the UPDATEs re-check their
	// conditions on each row's latest version (a call claimed or cancelled
	// meanwhile is left alone; the claim re-checks a batch's pause), so
	// nothing needs SERIALIZABLE's retries, which three processes promoting
	// the same calls exhausted. One process promotes at a time: the others
	// skip with ErrPromoting (the promoted calls' NOTIFY wakes their dial
	// queues all the same) rather than wait on the same rows or deadlock on
	// their order.
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		queued = 0
		mine, err := db.c.Dialect().TryLock(ctx, tx, promoteLockKey)
		if err != nil {
			return err
		}
		if !mine {
			return ErrPromoting
		}
		n := sqldb.MS(now)
		ids, err := queryIDs(ctx, tx, `UPDATE calls SET status = 'queued', updated_at = ?
			WHERE status IN ('initiated', 'scheduled') AND due_at <= ? AND `+notPausedSQL+` RETURNING id`, n, n)
		if err != nil {
			return err
		}
		queued = int64(len(ids))
		if _, err = tx.ExecContext(ctx, `UPDATE calls SET status = 'scheduled', updated_at = ? WHERE status = 'initiated'`, n); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallQueued, ids)
	})
	if errors.Is(err, ErrPromoting) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("storage: promote due calls: %w", err)
	}
	return queued, nil
}

// ErrPromoting is PromoteDueCalls skipping while another process promotes
// (PostgreSQL). Look again shortly: that process may yet roll back (a
// shutdown, an error) and then sends no wake-up.
var ErrPromoting = errors.New("another process is promoting due calls")

// promoteLockKey is the transaction-level advisory lock PostgreSQL's
// promotion tries ("promo").
const promoteLockKey = 0x70726f6d6f

// DueWorkSQL is the scheduler's poll (argument: now) in dialect d, exported for the tests of its plans. On PostgreSQL the
// scheduled calls' earliest due time is read as the first of
// calls_status_due in due order (ORDER BY ... LIMIT 1), which stops at the
// first call whatever the plan: the EXISTS form became a sequential scan
// under the generic plan of a prepared statement (59 ms a poll at 181,000
// calls, against 0.4 ms), and min() an aggregate over every scheduled call
// when its generic plan was made while the table was small and kept as it
// grew (8 ms a wake-up at 54,000 calls, on every process at every insert).
func DueWorkSQL(d sqldb.Dialect) string { return dueWorkSQL.For(d) }

var dueWorkSQL = sqldb.PerDialect[string]{
	SQLite: `SELECT EXISTS (SELECT 1 FROM calls WHERE status = 'initiated')
		OR EXISTS (SELECT 1 FROM calls WHERE status = 'scheduled' AND due_at <= ? AND ` + notPausedSQL + `)`,
	Postgres: `SELECT EXISTS (SELECT 1 FROM calls WHERE status = 'initiated')
		OR coalesce((` + firstDueSQL("'scheduled'") + `) <= ?, false)`,
}

// firstDueSQL reads the earliest due time of the calls in status (SQL) in
// due order, so that every plan stops at the first (PostgreSQL; see
// DueWorkSQL).
func firstDueSQL(status string) string {
	return "SELECT due_at FROM calls WHERE status = " + status + " AND due_at IS NOT NULL AND " + notPausedSQL +
		" ORDER BY due_at LIMIT 1"
}

// NextDueSQL is the scheduler's and dial queue's next-due read (argument:
// a status) in dialect d, exported for the tests of its plans.
func NextDueSQL(d sqldb.Dialect) string { return nextDueSQL.For(d) }

var nextDueSQL = sqldb.PerDialect[string]{
	SQLite:   "SELECT min(due_at) FROM calls WHERE status = ? AND " + notPausedSQL,
	Postgres: "SELECT (" + firstDueSQL("?") + ")",
}

// NextDue returns the earliest due time among calls in the status (ok false
// when there are none).
func (db *Calls) NextDue(ctx context.Context, status string) (time.Time, bool, error) {
	var v sql.NullInt64
	if err := db.c.ReadRowFresh(ctx, nextDueSQL.For(db.c.Dialect()), status).Scan(&v); err != nil {
		return time.Time{}, false, fmt.Errorf("storage: next due: %w", err)
	}
	if !v.Valid {
		return time.Time{}, false, nil
	}
	return sqldb.FromMS(v.Int64), true, nil
}

// Progress is a non-final step of a claimed attempt.
type Progress struct {
	Status           string // connecting, ringing or active
	RoomID           string
	JobID            string
	SIPParticipantID string
	At               time.Time
}

// RecordProgress writes a step of the attempt held by token. live is false
// when the claim no longer holds (the call was cancelled or settled): the
// worker should hang up.
func (db *Calls) RecordProgress(ctx context.Context, id, token string, p Progress) (bool, error) {
	var live bool
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		at := sqldb.MS(p.At)
		// A step that moves the status (most do) is one UPDATE guarded by
		// status <> the new one: it changed the status exactly when it
		// updated a row. Only when it did not is the step run again without
		// that guard, for a step that repeats the status (a room id
		// learnt later) or a call that is no longer live.
		set := `UPDATE calls SET status = ?, room_id = coalesce(?, room_id),
			job_id = coalesce(?, job_id), sip_participant_id = coalesce(?, sip_participant_id),
			answered_at = CASE WHEN ? = 'active' THEN coalesce(answered_at, ?) ELSE answered_at END, updated_at = ?
			WHERE id = ? AND claim_token = ? AND status IN ` + liveSQL
		args := []any{p.Status, sqldb.NullStr(p.RoomID), sqldb.NullStr(p.JobID), sqldb.NullStr(p.SIPParticipantID), p.Status, at, at, id, token}
		res, err := tx.ExecContext(ctx, set+" AND status <> ?", append(args, p.Status)...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		moved := n > 0
		if !moved {
			if res, err = tx.ExecContext(ctx, set, args...); err != nil {
				return err
			}
			n, _ = res.RowsAffected()
		}
		live = n > 0
		if live {
			if _, err = tx.ExecContext(ctx, `UPDATE call_attempts SET status = ?, room_id = coalesce(?, room_id)
				WHERE claim_token = ?`, p.Status, sqldb.NullStr(p.RoomID), token); err != nil {
				return err
			}
			if moved {
				return db.emitCalls(ctx, tx, callEventType(p.Status, false), []string{id})
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("storage: call progress: %w", err)
	}
	return live, nil
}

// Outcome is how a claimed attempt ended, and what happens next.
type Outcome struct {
	Status   string // completed, busy, no_answer, failed or cancelled
	Reason   string // failure reason
	SIPCode  int
	Duration *float64 // seconds of talk
	Summary  string
	EndedAt  time.Time
	// RetryAt, when set, sends the call back to scheduled for its next
	// attempt instead of ending it.
	RetryAt *time.Time
	// ExpiredBefore, when set, settles the attempt only if its lease ran out
	// before that time (recovery of a dead worker's attempt).
	ExpiredBefore *time.Time
	// Label, when set, is recorded as the call's last outcome and the
	// attempt's status instead of Status (voicemail: answered by a machine).
	Label string
}

// label is what the attempt is recorded as.
func (o Outcome) label() string {
	if o.Label != "" {
		return o.Label
	}
	return o.Status
}

// FinishAttempt settles the attempt held by token. settled is false when the
// claim no longer held the call: a cancelled call keeps its status (the
// attempt is still recorded and the claim released), and an attempt settled
// elsewhere is left alone.
func (db *Calls) FinishAttempt(ctx context.Context, id, token string, o Outcome) (bool, error) {
	var settled bool
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		o := o // changed below; fn may run again
		end, reason := sqldb.MS(o.EndedAt), sqldb.NullStr(o.Reason)
		var sipCode any
		if o.SIPCode != 0 {
			sipCode = o.SIPCode
		}
		guard := " WHERE id = ? AND claim_token = ? AND status IN " + liveSQL
		args := []any{id, token}
		if o.ExpiredBefore != nil {
			guard += " AND lease_until < ?"
			args = append(args, sqldb.MS(*o.ExpiredBefore))
		}
		var res sql.Result
		var err error
		if o.RetryAt != nil {
			res, err = tx.ExecContext(ctx, `UPDATE calls SET status = 'scheduled', due_at = ?, last_outcome = ?,
				failure_reason = ?, sip_code = ?, claim_token = NULL, worker_id = NULL, lease_until = NULL,
				updated_at = ?`+guard, append([]any{sqldb.MS(*o.RetryAt), o.label(), reason, sipCode, end}, args...)...)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE calls SET status = ?, last_outcome = ?, failure_reason = ?,
				sip_code = ?, duration = ?, summary = coalesce(?, summary), ended_at = ?, claim_token = NULL, worker_id = NULL,
				lease_until = NULL, updated_at = ?`+guard,
				append([]any{o.Status, o.label(), reason, sipCode, o.Duration, sqldb.NullStr(o.Summary), end, end}, args...)...)
		}
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		settled = n > 0
		if !settled {
			// Cancelled while dialling: release the claim, keep what the call
			// got to (duration of the hung-up call), leave the status.
			cg := " WHERE id = ? AND claim_token = ? AND status = 'cancelled'"
			if o.ExpiredBefore != nil {
				cg += " AND lease_until < ?"
			}
			res, err = tx.ExecContext(ctx, `UPDATE calls SET duration = coalesce(?, duration),
				last_outcome = 'cancelled', claim_token = NULL, worker_id = NULL, lease_until = NULL, updated_at = ?`+cg,
				append([]any{o.Duration, end}, args...)...)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil // not ours any more: recorded by whoever settled it
			}
			o.Status, o.Label = CallCancelled, ""
		}
		if _, err = tx.ExecContext(ctx, `UPDATE call_attempts SET status = ?, failure_reason = ?, sip_code = ?,
			duration = ?, ended_at = ? WHERE claim_token = ?`, o.label(), reason, sipCode, o.Duration, end, token); err != nil {
			return err
		}
		if !settled {
			return nil // cancelled: call.ended was written by the cancel
		}
		return db.emitCalls(ctx, tx, callEventType(o.Status, o.RetryAt != nil), []string{id})
	})
	if err != nil {
		return false, fmt.Errorf("storage: finish call attempt: %w", err)
	}
	return settled, nil
}

// RequeueAttempt gives back an attempt the dialer refused to place
// (ErrRetryLater): the call is queued again for dueAt without spending the
// attempt, and the attempt row is removed (it was never dialled). A call
// cancelled meanwhile only loses the claim.
func (db *Calls) RequeueAttempt(ctx context.Context, id, token string, dueAt time.Time) error {
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		now := sqldb.MS(time.Now())
		_, err := tx.ExecContext(ctx, `UPDATE calls SET status = CASE WHEN status = 'cancelled' THEN status ELSE 'queued' END,
			due_at = ?, attempts = attempts - 1, claim_token = NULL, worker_id = NULL, lease_until = NULL,
			room_id = NULL, job_id = NULL, sip_participant_id = NULL, updated_at = ?
			WHERE id = ? AND claim_token = ? AND status IN ('connecting', 'ringing', 'active', 'cancelled')`,
			sqldb.MS(dueAt), now, id, token)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM call_attempts WHERE claim_token = ?", token)
		return err
	})
	if err != nil {
		return fmt.Errorf("storage: requeue call: %w", err)
	}
	return nil
}

// RenewLeases extends the lease of every attempt the worker holds and
// returns the claim tokens whose calls are still live; a held token missing
// from the answer was cancelled (or lost) and must be hung up.
func (db *Calls) RenewLeases(ctx context.Context, workerID string, leaseUntil time.Time) (map[string]bool, error) {
	var live map[string]bool
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		live = map[string]bool{} // fn runs again after a serialization failure
		if _, err := tx.ExecContext(ctx, `UPDATE calls SET lease_until = ? WHERE worker_id = ? AND claim_token IS NOT NULL`,
			sqldb.MS(leaseUntil), workerID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT claim_token FROM calls WHERE worker_id = ?
			AND claim_token IS NOT NULL AND status IN `+liveSQL, workerID)
		if err != nil {
			return err
		}
		return sqldb.Each(rows, func(sc sqldb.Scanner) error {
			var t string
			err := sc.Scan(&t)
			live[t] = true
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("storage: renew leases: %w", err)
	}
	return live, nil
}

// ExpiredClaims lists calls whose claimed attempt's lease ran out before
// now: their worker died (or stalled) mid-dial.
func (db *Calls) ExpiredClaims(ctx context.Context, now time.Time) ([]Call, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+callColumns+callFrom+
		" WHERE c.claim_token IS NOT NULL AND c.lease_until < ? AND c.status IN "+
		strings.Replace(liveSQL, "(", "('cancelled', ", 1), sqldb.MS(now))
	if err != nil {
		return nil, fmt.Errorf("storage: expired claims: %w", err)
	}
	return sqldb.Collect(rows, scanCall)
}
