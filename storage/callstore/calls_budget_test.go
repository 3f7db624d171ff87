package callstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/callstore"
)

// Two handles on one database, as two processes, share the trunk's dial
// budget: one pace of call starts and one cap on calls at once; a claim
// given back without a dial returns its slot.
func TestDialBudgetSharedByProcesses(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	other, err := storage.Open(ctx, q.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	q.add(callstore.CallQueued, 0, 5, 5, 5, 5, 5, 5)
	ms := time.Millisecond
	b := &callstore.Budget{Trunk: "sim", Interval: 100 * ms, Lead: 50 * ms, MaxActive: 3}
	t0 := q.now
	claim := func(db *storage.Stores, at time.Duration) callstore.Claimed {
		t.Helper()
		r, err := db.Calls.ClaimCall(ctx, callstore.Claim{Token: fmt.Sprint(time.Now().UnixNano()), WorkerID: "w",
			Dialer: "sim", Now: t0.Add(at), LeaseUntil: t0.Add(at + 30*time.Second), Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	expect := func(r callstore.Claimed, start, next time.Duration) {
		t.Helper()
		if !r.OK || !r.Slot.Start.Equal(t0.Add(start)) || !r.Slot.Next.Equal(t0.Add(next)) {
			t.Fatalf("claim: ok %v slot %v..%v, want +%v..+%v", r.OK, r.Slot.Start.Sub(t0), r.Slot.Next.Sub(t0), start, next)
		}
	}

	expect(claim(q.db, 0), 0, 100*ms)
	if r := claim(other, 0); r.OK || r.Wait != 50*ms {
		t.Fatalf("second process at once: ok %v wait %v, want a 50 ms wait (slot at +100 ms, lead 50 ms)", r.OK, r.Wait)
	}
	r := claim(other, 60*ms) // claimed ahead: it starts at its slot
	expect(r, 100*ms, 200*ms)
	if a := q.attempts(r.Call.ID); len(a) != 1 || !a[0].StartedAt.Equal(t0.Add(100*ms)) {
		t.Fatalf("attempt of a call claimed ahead: %+v, want it started at its slot", a)
	}
	third := claim(q.db, 210*ms) // 10 ms late: the schedule holds
	expect(third, 210*ms, 300*ms)
	if r := claim(other, 300*ms); r.OK || !r.Full {
		t.Fatalf("fourth call with three up: ok %v full %v, want the cap", r.OK, r.Full)
	}
	ok, err := q.UndoClaim(ctx, third.Call.ID, third.Call.ClaimToken, callstore.Undo{Status: callstore.CallFailed, Reason: callstore.ReasonDoNotCall,
		At: t0.Add(220 * ms), Slot: third.Slot})
	if err != nil || !ok {
		t.Fatalf("undo: %v %v", ok, err)
	}
	// The cap has room again, and the slot at +210 ms was given back.
	expect(claim(other, 230*ms), 230*ms, 310*ms)
	// Long idle: the schedule restarts at now, one interval apart (no cap
	// now: three calls are up).
	b.MaxActive = 0
	expect(claim(q.db, 5*time.Second), 5*time.Second, 5*time.Second+100*ms)
}
