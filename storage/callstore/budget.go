package callstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Budget is the dial budget of one trunk, kept in the database (table
// dial_budget) so that every process dialling from it shares one
// calls-per-second pace and one cap on calls at once, instead of each
// applying them on its own and multiplying them by the number of processes.
type Budget struct {
	Trunk     string        // the budget's key: the dialer's name
	Interval  time.Duration // between call starts: 1/CPS, stretched after carrier pushback
	Lead      time.Duration // how long before its slot a call may be claimed (hides the claim's own latency)
	MaxActive int           // outbound calls being dialled or talked on across processes; 0: no cap
}

// Slot is the start a budgeted claim took: the call is dialled at Start,
// and the trunk's next call may start at Next.
type Slot struct {
	Trunk       string // "" for none
	Start, Next time.Time
}

// Claimed is the answer of ClaimCall.
type Claimed struct {
	Call Call
	OK   bool          // a call was claimed
	Slot Slot          // with a Budget: when to dial it
	Wait time.Duration // OK false: the budget has no slot before Now+Wait
	Full bool          // OK false: MaxActive calls are up already
}

// budgetSlot checks the budget for a claim at cl.Now and fills r: ok is
// true with r.Slot set when a call may be claimed, false with r.Wait or
// r.Full when not. The caller runs it in the claim's write transaction, so
// the check and the claim are one step for every process.
//
// The slot starts at the trunk's next_us, or now when that has passed. A
// claim up to Lead early sleeps until its slot, so the pace does not lose
// the claim's latency; one late by at most a quarter interval keeps the
// schedule (the next slot follows the missed one), so a short stall
// elsewhere (a slow write or round trip) does not slow the campaign.
// Starts are thus never closer than 3/4 of the interval, and over any
// span the count of starts is at most span/interval + 1.
//
// With cl.Clock the slot is reckoned from the time read after the trunk's
// row lock is held: a claim that waited for the lock behind other
// processes' claims would otherwise take a "now" already past and dial at
// once, next to the claim that held the lock (44 dials in a second on a
// 40 CPS trunk).
//
// own is how many of the live calls counted for MaxActive are the
// caller's own claim: PostgreSQL checks the budget after taking the call
// (see ClaimCall), SQLite before.
func (db *Calls) budgetSlot(ctx context.Context, tx *sql.Tx, cl Claim, own int, r *Claimed) (bool, error) {
	b := cl.Budget
	var us int64
	if db.c.Postgres() {
		// The claim runs at READ COMMITTED (sqldb.WriteClaim): the trunk's
		// row is locked here, once the call is taken, so the claims of every
		// process using the trunk take their slot, and count the calls up,
		// one at a time, each holding it only until its commit.
		if err := tx.QueryRowContext(ctx, `INSERT INTO dial_budget (trunk, next_us) VALUES (?, 0)
			ON CONFLICT (trunk) DO UPDATE SET next_us = dial_budget.next_us RETURNING next_us`, b.Trunk).Scan(&us); err != nil {
			return false, err
		}
	}
	if b.MaxActive > 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM calls WHERE status IN `+liveSQL+`
			AND direction = 'outbound' AND lease_until >= ?`, sqldb.MS(cl.Now)).Scan(&n); err != nil {
			return false, err
		}
		if n-own >= b.MaxActive {
			r.Full = true
			return false, nil
		}
	}
	if !db.c.Postgres() {
		if err := tx.QueryRowContext(ctx, "SELECT next_us FROM dial_budget WHERE trunk = ?", b.Trunk).Scan(&us); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, err
		}
	}
	next, now := time.UnixMicro(us), cl.Now
	if cl.Clock != nil {
		now = cl.Clock()
	}
	if wait := next.Sub(now) - b.Lead; wait > 0 {
		r.Wait = wait
		return false, nil
	}
	start, base := next, next
	if now.After(next) {
		start = now
		if now.Sub(next) > b.Interval/4 {
			base = now
		}
	}
	r.Slot = Slot{Trunk: b.Trunk, Start: start, Next: base.Add(b.Interval)}
	return true, nil
}
