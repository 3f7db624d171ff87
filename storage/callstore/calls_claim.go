package callstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// The dial queue's claim of one call attempt: taking the next due call
// (with the trunk's dial budget, budget.go), the campaign rules of which
// queued calls may be taken (not in a paused batch, agent under its own
// concurrency cap), and giving back a claimed attempt the queue decided
// not to dial (number on the do-not-call list, outside calling hours).

// Claim identifies one claim of a call attempt.
type Claim struct {
	Token      string // unique per attempt
	WorkerID   string // the claiming process (dial queue instance)
	Dialer     string
	Now        time.Time
	LeaseUntil time.Time
	Budget     *Budget // nil: no pacing or cap in the database
	// Clock, when set, is read for the budget's slot once the trunk's row
	// lock is held (see budgetSlot); nil: Now.
	Clock func() time.Time
}

// ClaimNextCall atomically takes the next queued call that is due (lowest
// priority number first, then earliest due time), moving it to connecting
// with attempts + 1 under the claim. ok is false when nothing is due (or
// the budget of cl.Budget has no slot: see ClaimCall).
func (db *Calls) ClaimNextCall(ctx context.Context, cl Claim) (Call, bool, error) {
	r, err := db.ClaimCall(ctx, cl)
	return r.Call, r.OK, err
}

// ClaimCall is ClaimNextCall with the answer of the dial budget. The
// UPDATE is guarded by status = 'queued' inside one write transaction
// (READ COMMITTED on PostgreSQL: see sqldb.WriteClaim),
// and the attempt row's primary key (call, attempt) backs it up: no two
// claims, in this process or another, can get the same attempt. With a
// Budget, the cap on calls at once and the pacing slot are checked and
// taken in the same transaction, so every process on the database shares
// them.
//
// Each dialect has its own flow, chosen here once. SQLite checks the
// budget before it takes the call (claimSQLite). PostgreSQL takes the call
// first, re-checks its agent's cap (claims run concurrently there), and
// locks the trunk's budget row last (claimPostgres): every claim of every
// process on the trunk passes that lock one at a time, so it is held only
// for the slot's few statements and the commit (taken first, it was held
// through the whole claim, and three processes dialled no faster than
// one).
func (db *Calls) ClaimCall(ctx context.Context, cl Claim) (Claimed, error) {
	claim := sqldb.PerDialect[func(context.Context, Claim) (Claimed, error)]{SQLite: db.claimSQLite, Postgres: db.claimPostgres}
	r, err := claim.For(db.c.Dialect())(ctx, cl)
	if err != nil {
		return Claimed{}, fmt.Errorf("storage: claim call: %w", err)
	}
	return r, nil
}

// claimSQLite is ClaimCall on SQLite: the budget's slot first, then the
// call, then the trunk's next slot written.
func (db *Calls) claimSQLite(ctx context.Context, cl Claim) (Claimed, error) {
	var r Claimed
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		r = Claimed{}
		if cl.Budget != nil {
			// The cap first, then the trunk's next slot: SQLite runs one
			// write transaction at a time, so a plain read of its row will do.
			if full, err := budgetFull(ctx, tx, cl, 0, &r); err != nil || full {
				return err
			}
			var us int64
			if err := tx.QueryRowContext(ctx, "SELECT next_us FROM dial_budget WHERE trunk = ?", cl.Budget.Trunk).Scan(&us); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if !budgetSlot(cl, us, &r) {
				return nil
			}
		}
		// The attempt starts at its slot: claimed up to Lead ahead, it is
		// dialled then.
		start := sqldb.MS(cl.Now)
		if r.Slot.Trunk != "" {
			start = sqldb.MS(r.Slot.Start)
		}
		var id string
		var attempt int
		err := tx.QueryRowContext(ctx, claimSQL.SQLite, claimArgs(cl, start)...).Scan(&id, &attempt)
		if errors.Is(err, sql.ErrNoRows) {
			r.Slot = Slot{}
			return nil
		}
		if err != nil {
			return err
		}
		if r.Call, err = db.recordAttempt(ctx, tx, cl, id, attempt, start); err != nil {
			return err
		}
		if r.Slot.Trunk != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO dial_budget (trunk, next_us) VALUES (?, ?)
				ON CONFLICT (trunk) DO UPDATE SET next_us = excluded.next_us`, r.Slot.Trunk, r.Slot.Next.UnixMicro()); err != nil {
				return err
			}
		}
		r.OK = true
		return nil
	})
	if err != nil {
		return Claimed{}, err
	}
	return r, nil
}

// claimPostgres is ClaimCall on PostgreSQL: a read of the budget outside
// the transaction, then the call, its agent's cap re-checked, and last the
// budget's slot under the trunk's row lock (see ClaimCall).
func (db *Calls) claimPostgres(ctx context.Context, cl Claim) (Claimed, error) {
	if cl.Budget != nil && db.pacing(cl.Budget.Trunk) {
		// A read first, outside any transaction: while the pace is what
		// holds the dials back, most claims find the next slot taken, and
		// should not take a call only to give it back. While it does not
		// (the last claim's slot was free at once), the read is skipped:
		// a round trip on every dial for nothing.
		var us int64
		err := db.r.QueryRowContext(ctx, "SELECT next_us FROM dial_budget WHERE trunk = ?", cl.Budget.Trunk).Scan(&us)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Claimed{}, err
		}
		if p := (Claimed{}); !budgetSlot(cl, us, &p) {
			return p, nil // only p.Wait is set
		}
	}
	var r Claimed
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		r = Claimed{}
		// The attempt starts now until its slot is known: startAtSlot
		// moves it there.
		start := sqldb.MS(cl.Now)
		if _, err := tx.ExecContext(ctx, ClaimPlanPG); err != nil {
			return err
		}
		var id, agent string
		var attempt int
		var maxCalls float64
		err := tx.QueryRowContext(ctx, claimSQL.Postgres, claimArgs(cl, start)...).Scan(&id, &attempt, &agent, &maxCalls)
		if err == nil {
			var ok bool
			if ok, err = agentCapHeld(ctx, tx, agent, maxCalls); err == nil && !ok {
				err = errOverCap
			}
		}
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if r.Call, err = db.recordAttempt(ctx, tx, cl, id, attempt, start); err != nil {
			return err
		}
		if cl.Budget != nil {
			// The claim runs at READ COMMITTED (sqldb.WriteClaim): the
			// trunk's row is locked here, once the call is taken, so the
			// claims of every process using the trunk take their slot, and
			// count the calls up, one at a time, each holding it only until
			// its commit.
			var us int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO dial_budget (trunk, next_us) VALUES (?, 0)
				ON CONFLICT (trunk) DO UPDATE SET next_us = dial_budget.next_us RETURNING next_us`, cl.Budget.Trunk).Scan(&us); err != nil {
				return err
			}
			// The trunk's next slot still ahead: the pace holds (read first
			// next time); passed: there is room (skip that read).
			if us > cl.Now.UnixMicro() {
				db.paced.Store(cl.Budget.Trunk, true)
			} else {
				db.paced.Delete(cl.Budget.Trunk)
			}
			full, err := budgetFull(ctx, tx, cl, 1, &r)
			if err != nil {
				return err
			}
			if full || !budgetSlot(cl, us, &r) {
				return errNoSlot // gives the call back: r says why
			}
			if err := db.startAtSlot(ctx, tx, &r, start); err != nil {
				return err
			}
		}
		r.OK = true
		return nil
	})
	if errors.Is(err, errOverCap) {
		return Claimed{}, nil
	}
	if errors.Is(err, errNoSlot) {
		r.Call, r.OK, r.Slot = Call{}, false, Slot{}
		return r, nil
	}
	if err != nil {
		return Claimed{}, err
	}
	return r, nil
}

// pacing reports whether the pace held this process's last claim on trunk
// back (see claimPostgres).
func (db *Calls) pacing(trunk string) bool {
	_, held := db.paced.Load(trunk)
	return held
}

// claimArgs are the arguments of claimSQL for a claim whose attempt
// starts at start (Unix ms).
func claimArgs(cl Claim, start int64) []any {
	now := sqldb.MS(cl.Now)
	return []any{cl.Token, cl.WorkerID, sqldb.MS(cl.LeaseUntil), start, sqldb.NullStr(cl.Dialer), now, now}
}

// recordAttempt writes the attempt row of the call just claimed, and reads
// the call back as claimed.
func (db *Calls) recordAttempt(ctx context.Context, tx *sql.Tx, cl Claim, id string, attempt int, start int64) (Call, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO call_attempts (call_id, attempt, claim_token, worker_id,
			status, started_at) VALUES (?, ?, ?, ?, 'connecting', ?)`, id, attempt, cl.Token, cl.WorkerID, start); err != nil {
		return Call{}, fmt.Errorf("record attempt %d of %s: %w", attempt, id, err)
	}
	return scanCall(tx.QueryRowContext(ctx, "SELECT "+callColumns+callFrom+" WHERE c.id = ?", id))
}

// errNoSlot rolls back a PostgreSQL claim whose trunk had no slot for it.
var errNoSlot = errors.New("no dial slot")

// startAtSlot takes the slot of a PostgreSQL claim (r.Slot, found under
// the trunk's lock) and moves the attempt's start, written as provisional
// when the call was taken, to it: one statement, for the lock's sake.
func (db *Calls) startAtSlot(ctx context.Context, tx *sql.Tx, r *Claimed, provisional int64) error {
	at := sqldb.MS(r.Slot.Start)
	_, err := tx.ExecContext(ctx, `WITH b AS (UPDATE dial_budget SET next_us = ? WHERE trunk = ?),
		c AS (UPDATE calls SET started_at = ? WHERE id = ? AND started_at = ?)
		UPDATE call_attempts SET started_at = ? WHERE claim_token = ?`,
		r.Slot.Next.UnixMicro(), r.Slot.Trunk, at, r.Call.ID, provisional, at, r.Call.ClaimToken)
	if err != nil {
		return err
	}
	if r.Call.StartedAt != nil && sqldb.MS(*r.Call.StartedAt) == provisional {
		start := r.Slot.Start.UTC().Truncate(time.Millisecond)
		r.Call.StartedAt = &start
	}
	return nil
}

// notPausedSQL keeps out calls of a paused batch (unqualified columns of
// calls). The subquery is not correlated: SQLite runs it once per statement.
const notPausedSQL = "(batch_id IS NULL OR batch_id NOT IN (SELECT id FROM call_batches WHERE status = 'paused'))"

// claimableSQL is the claim's filter on a queued call c: not in a paused
// batch, and its agent below the agent's maxConcurrentCalls (a voice agent
// config key; absent or 0 means no cap of its own) counting its calls being
// dialled or talked on, inbound ones included. The claim applies it to the
// due calls in claim order: read through calls_queue (the queued calls by
// priority, due_at, created_at, id: no sort at all), in a subquery with a
// LIMIT (never flattened), so it runs call by call until one passes
// instead of on every due call. maxCalls is the dialect's expression
// for the agent's maxConcurrentCalls (a number read from a.config).
func claimableSQL(maxCalls string) string {
	return `(c.batch_id IS NULL OR c.batch_id NOT IN (SELECT id FROM call_batches WHERE status = 'paused'))
	AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = c.agent_id
		AND coalesce(` + maxCalls + `, 0) > 0
		AND (SELECT count(*) FROM calls x WHERE x.agent_id = c.agent_id AND x.status IN ` + liveSQL + `)
			>= ` + maxCalls + `)`
}

// claimSQL is the claim's UPDATE (arguments: token, worker, lease end,
// now three times) in each dialect. On PostgreSQL the due call is picked
// with FOR UPDATE SKIP LOCKED, so claimers never wait on each other's row;
// it also returns the agent and its maxConcurrentCalls, for the re-check
// under the agent's lock (claims there run concurrently: agentCapHeld).
var claimSQL = sqldb.PerDialect[string]{
	SQLite: `UPDATE calls SET ` + claimSet + `
			WHERE id = (SELECT id FROM (SELECT id, batch_id, agent_id FROM calls INDEXED BY calls_queue
				WHERE status = 'queued' AND due_at <= ? ORDER BY priority, due_at, created_at, id LIMIT -1) c
				WHERE ` + claimableSQL("json_extract(a.config, '$.maxConcurrentCalls')") + ` LIMIT 1)
			AND status = 'queued'
			RETURNING id, attempts`,
	Postgres: `UPDATE calls SET ` + claimSet + `
			WHERE id = (SELECT c.id FROM calls c WHERE c.status = 'queued' AND c.due_at <= ?
				AND ` + claimableSQL("(a.config::jsonb ->> 'maxConcurrentCalls')::float8") + `
				ORDER BY c.priority, c.due_at, c.created_at, c.id LIMIT 1 FOR UPDATE SKIP LOCKED)
			AND status = 'queued'
			RETURNING id, attempts, agent_id, (SELECT coalesce((a.config::jsonb ->> 'maxConcurrentCalls')::float8, 0)
				FROM agents a WHERE a.id = calls.agent_id)`,
}

const claimSet = `status = 'connecting', claim_token = ?, worker_id = ?,
			lease_until = ?, attempts = attempts + 1, started_at = coalesce(started_at, ?), dialer = ?,
			room_id = NULL, job_id = NULL, sip_participant_id = NULL, updated_at = ?`

// Undo says what becomes of a claimed attempt that is not dialled after all.
type Undo struct {
	// Status is CallScheduled (deferred to DueAt: the attempt is given back
	// and goes again then) or CallFailed (ended with Reason, never dialled).
	Status string
	DueAt  time.Time
	Reason string
	At     time.Time
	// Slot is the dial budget's slot the claim took; it is given back
	// unless a later claim has taken the next one already.
	Slot Slot
}

// UndoClaim gives back the attempt held by token without it being dialled:
// attempts goes back down, the attempt row is removed, and the call is
// scheduled for u.DueAt (its scheduledAt moves too when this was its first
// attempt) or failed with u.Reason. A call cancelled meanwhile only loses
// the claim. done is false when the claim no longer held the call.
func (db *Calls) UndoClaim(ctx context.Context, id, token string, u Undo) (bool, error) {
	var done bool
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		at := sqldb.MS(u.At)
		var res sql.Result
		var err error
		const release = `attempts = attempts - 1, claim_token = NULL, worker_id = NULL, lease_until = NULL,
			room_id = NULL, job_id = NULL, sip_participant_id = NULL,
			dialer = CASE WHEN attempts = 1 THEN NULL ELSE dialer END, updated_at = ?`
		const guard = " WHERE id = ? AND claim_token = ? AND status = 'connecting'"
		switch u.Status {
		case CallScheduled:
			res, err = tx.ExecContext(ctx, `UPDATE calls SET status = 'scheduled', due_at = ?,
				scheduled_at = CASE WHEN attempts = 1 THEN ? ELSE scheduled_at END, `+release+guard,
				sqldb.MS(u.DueAt), sqldb.MS(u.DueAt), at, id, token)
		case CallFailed:
			res, err = tx.ExecContext(ctx, `UPDATE calls SET status = 'failed', failure_reason = ?,
				last_outcome = 'failed', ended_at = ?, `+release+guard, sqldb.NullStr(u.Reason), at, at, id, token)
		default:
			return fmt.Errorf("undo claim: status %q: want scheduled or failed", u.Status)
		}
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		done = n > 0
		if !done {
			// Cancelled while claimed: only the claim goes.
			if _, err := tx.ExecContext(ctx, `UPDATE calls SET `+release+
				" WHERE id = ? AND claim_token = ? AND status = 'cancelled'", at, id, token); err != nil {
				return err
			}
		}
		if _, err = tx.ExecContext(ctx, "DELETE FROM call_attempts WHERE claim_token = ?", token); err != nil {
			return err
		}
		if u.Slot.Trunk != "" {
			if _, err = tx.ExecContext(ctx, "UPDATE dial_budget SET next_us = ? WHERE trunk = ? AND next_us = ?",
				u.Slot.Start.UnixMicro(), u.Slot.Trunk, u.Slot.Next.UnixMicro()); err != nil {
				return err
			}
		}
		if done && u.Status == CallFailed {
			return db.emitCalls(ctx, tx, EventCallEnded, []string{id})
		}
		return nil // deferred: it waits as before its claim, no event
	})
	if err != nil {
		return false, fmt.Errorf("storage: undo claim: %w", err)
	}
	return done, nil
}

// ClaimPlanPG makes PostgreSQL plan the claim, in its transaction, as
// sorted by the calls_queue index. Left to its statistics it sorts: a burst
// of new calls looks like a few rows until the next ANALYZE, and the plan
// then sorts every queued call on each claim (measured: 4-5 ms a claim
// with 2,000 queued, against 0.2 ms read from the index).
const ClaimPlanPG = "SET LOCAL enable_sort = off"

// ClaimSQL is the claim's statement in dialect d, for the test that keeps
// its plan free of sorts and for EXPLAIN by hand.
func ClaimSQL(d sqldb.Dialect) string { return claimSQL.For(d) }

// errOverCap rolls back a PostgreSQL claim that the agent's cap re-check
// refused.
var errOverCap = errors.New("agent at its maxConcurrentCalls")

// agentCapHeld re-checks, on PostgreSQL, the claimed call's agent cap of
// calls at once: the claim's own filter read the count without a lock,
// and two processes may each have taken the agent's last free place. The
// agent's advisory lock orders the re-checks; each counts, in a statement
// that starts after the previous holder committed, the calls up including
// its own claim.
func agentCapHeld(ctx context.Context, tx *sql.Tx, agentID string, maxCalls float64) (bool, error) {
	if maxCalls <= 0 {
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('agent:' || ?, 0))", agentID); err != nil {
		return false, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM calls WHERE agent_id = ? AND status IN "+liveSQL, agentID).Scan(&n); err != nil {
		return false, err
	}
	return float64(n) <= maxCalls, nil
}
