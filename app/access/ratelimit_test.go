package access

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

func TestRateLimiterSlides(t *testing.T) {
	l := NewLimiter(time.Minute, nil)
	ctx := context.Background()
	t0 := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if ok, rem, _, _ := l.Allow(ctx, "k", 3, t0.Add(time.Duration(i)*10*time.Second)); !ok || rem != 2-i {
			t.Fatalf("request %d: ok %v remaining %d", i, ok, rem)
		}
	}
	if ok, _, reset, _ := l.Allow(ctx, "k", 3, t0.Add(59*time.Second)); ok || !reset.Equal(t0.Add(time.Minute)) {
		t.Fatalf("4th inside the window admitted or reset %v", reset)
	}
	// The first admission leaves the window at t0+60s: one more fits.
	if ok, rem, _, _ := l.Allow(ctx, "k", 3, t0.Add(60*time.Second)); !ok || rem != 0 {
		t.Fatalf("after slide: ok %v remaining %d", ok, rem)
	}
	if ok, _, _, _ := l.Allow(ctx, "k", 3, t0.Add(61*time.Second)); ok {
		t.Fatal("window should still be full")
	}
	if ok, _, _, _ := l.Allow(ctx, "other", 3, t0.Add(61*time.Second)); !ok {
		t.Fatal("keys must not share a window")
	}
}

// Three limiters on one database, as three processes: together they admit
// the limit per window, never more in any window, and refuse at most one
// bucket (window/60) longer than an exact log would.
func TestSharedLimiterAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	path := dbtest.Path(t, "rl.db")
	var ls []*Limiter
	for range 3 {
		db := storetest.Open(t, path)
		ls = append(ls, NewLimiter(time.Minute, db.Orgs))
	}
	const limit = 30
	t0 := time.Unix(1_800_000_000, 0) // on a bucket boundary (a whole second)
	var admitted []time.Time
	// One request every 500 ms for three minutes, round robin.
	for i := range 360 {
		at := t0.Add(time.Duration(i) * 500 * time.Millisecond)
		ok, rem, reset, err := ls[i%3].Allow(ctx, "key", limit, at)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			admitted = append(admitted, at)
			if rem < 0 || rem >= limit {
				t.Fatalf("request %d: remaining %d", i, rem)
			}
		} else if !reset.After(at) {
			t.Fatalf("request %d refused with reset %v, not after %v", i, reset, at)
		}
	}
	// Never more than the limit inside any one-minute window.
	for i := range admitted {
		j := i
		for j < len(admitted) && admitted[j].Sub(admitted[i]) < time.Minute {
			j++
		}
		if j-i > limit {
			t.Fatalf("%d admitted in the minute from %v", j-i, admitted[i])
		}
	}
	// An exact log admits the first 30 (15 s), then one each time the
	// oldest leaves: 30 per minute, 90 in three minutes at most. The
	// buckets refuse at most one second longer per window.
	if len(admitted) < 3*limit-3 || len(admitted) > 3*limit {
		t.Fatalf("admitted %d in three minutes, want %d (at most 3 fewer)", len(admitted), 3*limit)
	}
	if admitted[limit].Sub(t0) > time.Minute+time.Second {
		t.Fatalf("request %d admitted at +%v: more than a bucket after the window", limit+1, admitted[limit].Sub(t0))
	}
}
