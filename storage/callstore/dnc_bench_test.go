package callstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
)

// seedDNC lists n numbers (+1 800 000 0000 upwards) for org.
func seedDNC(tb testing.TB, db *storage.Stores, org string, n int) {
	tb.Helper()
	ctx := context.Background()
	const chunk = 50000
	nums := make([]string, 0, chunk)
	for lo := 0; lo < n; lo += chunk {
		nums = nums[:0]
		for i := lo; i < min(lo+chunk, n); i++ {
			nums = append(nums, fmt.Sprintf("+1800%07d", i))
		}
		if _, _, err := db.Calls.AddDNC(ctx, org, nums, "bench", time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkDNCCheck: the do-not-call check of one call (the dial queue's
// and a schedule's) with 1,000,000 numbers listed, half the checks hits.
func BenchmarkDNCCheck(b *testing.B) {
	ctx := context.Background()
	db, err := storage.Open(ctx, dbtest.Path(b, "dnc.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	org, _ := db.Orgs.CreateOrg(ctx, "acme")
	const n = 1_000_000
	t0 := time.Now()
	seedDNC(b, db, org.ID, n)
	b.Logf("listed %d numbers in %s", n, time.Since(t0).Round(time.Millisecond))
	r := rand.New(rand.NewPCG(1, 2))
	hits := 0
	b.ResetTimer()
	for b.Loop() {
		num := fmt.Sprintf("+1800%07d", r.IntN(2*n))
		ok, err := db.Calls.DNCListed(ctx, org.ID, num)
		if err != nil {
			b.Fatal(err)
		}
		if ok {
			hits++
		}
	}
	if b.N > 100 && (hits == 0 || hits == b.N) {
		b.Fatalf("%d hits of %d", hits, b.N)
	}
}
