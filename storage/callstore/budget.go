package callstore

import (
	"context"
	"database/sql"
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

// The budget is checked in the claim's write transaction, so the check and
// the claim are one step for every process. Its steps are the cap
// (budgetFull), the trunk's next_us read, and the slot (budgetSlot); each
// dialect runs them in its own order (see ClaimCall).

// budgetFull reports whether MaxActive calls are up already, setting
// r.Full. own is how many of the live calls it counts are the caller's own
// claim: PostgreSQL checks the budget after taking the call, SQLite before.
func budgetFull(ctx context.Context, tx *sql.Tx, cl Claim, own int, r *Claimed) (bool, error) {
	if cl.Budget.MaxActive <= 0 {
		return false, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM calls WHERE status IN `+liveSQL+`
			AND direction = 'outbound' AND lease_until >= ?`, sqldb.MS(cl.Now)).Scan(&n); err != nil {
		return false, err
	}
	r.Full = n-own >= cl.Budget.MaxActive
	return r.Full, nil
}

// budgetSlot reckons the slot of a claim at cl.Now from the trunk's
// next_us (us, 0 for none yet): ok is true with r.Slot set when a call may
// be claimed, false with r.Wait when not.
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
func budgetSlot(cl Claim, us int64, r *Claimed) bool {
	b := cl.Budget
	next, now := time.UnixMicro(us), cl.Now
	if cl.Clock != nil {
		now = cl.Clock()
	}
	if wait := next.Sub(now) - b.Lead; wait > 0 {
		r.Wait = wait
		return false
	}
	start, base := next, next
	if now.After(next) {
		start = now
		if now.Sub(next) > b.Interval/4 {
			base = now
		}
	}
	r.Slot = Slot{Trunk: b.Trunk, Start: start, Next: base.Add(b.Interval)}
	return true
}
