package callstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage/callstore"
)

// On PostgreSQL a claim reads its trunk's budget before taking a call only
// while the pace holds this process's claims back: then it answers "wait"
// without taking a call only to give it back. While the trunk has room
// (the last slot was free at once) that read would be a round trip on
// every dial for nothing. pg_stat_statements counts the reads.
func TestClaimReadsBudgetFirstOnlyWhilePaced(t *testing.T) {
	dbtest.SkipOnSQLite(t, "SQLite checks the budget inside the claim")
	ctx := context.Background()
	q := newQueueDB(t)
	q.add(callstore.CallQueued, 0, 5, 5, 5, 5, 5, 5)
	r := q.db.Conn().Reader()
	if _, err := r.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		t.Skipf("pg_stat_statements: %v", err)
	}
	reads := func() (n int64) {
		t.Helper()
		if err := r.QueryRowContext(ctx, `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
			WHERE query LIKE 'SELECT next_us FROM dial_budget%' AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n); err != nil {
			t.Skipf("pg_stat_statements is not loaded (.ci/postgres.sh preloads it): %v", err)
		}
		return n
	}
	claim := func(b *callstore.Budget, at time.Duration) callstore.Claimed {
		t.Helper()
		c, err := q.ClaimCall(ctx, callstore.Claim{Token: fmt.Sprint(time.Now().UnixNano()), WorkerID: "w", Dialer: b.Trunk,
			Now: q.now.Add(at), LeaseUntil: q.now.Add(at + time.Minute), Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	before := reads()
	fast := &callstore.Budget{Trunk: "fast", Interval: time.Microsecond}
	for i := range 3 {
		if c := claim(fast, time.Duration(i)*10*time.Millisecond); !c.OK {
			t.Fatalf("claim %d on a trunk with room: %+v", i, c)
		}
	}
	if n := reads() - before; n != 0 {
		t.Errorf("three claims on a trunk with room read its budget first %d times, want none", n)
	}

	slow := &callstore.Budget{Trunk: "slow", Interval: time.Hour}
	if c := claim(slow, 0); !c.OK {
		t.Fatalf("first claim on the slow trunk: %+v", c)
	}
	before = reads()
	if c := claim(slow, time.Millisecond); c.OK || c.Wait <= 0 { // takes a call, finds no slot, gives it back
		t.Fatalf("second claim within the hour: %+v, want a wait", c)
	}
	if c := claim(slow, 2*time.Millisecond); c.OK || c.Wait <= 0 {
		t.Fatalf("third claim within the hour: %+v, want a wait", c)
	}
	if n := reads() - before; n != 1 {
		t.Errorf("the claim after one held back by the pace read the budget first %d times, want once", n)
	}
}
