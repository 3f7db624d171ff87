package access

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/errs"
)

// Parallel wrong passwords for one email from one address are throttled
// before they are hashed (issue 27 item 1: 60 in parallel were all hashed,
// the limit being 10). At most PairFree of them get as far as a password
// check; the rest are refused with 429 without one.
func TestParallelSignInsThrottledBeforeHashing(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	now := time.Now().UTC()
	var mu sync.Mutex
	kinds := map[errs.Kind]int{}
	var wg sync.WaitGroup
	for range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := db.Login(ctx, "o@acme.test", "wrong password!", "", "203.0.113.9", now)
			mu.Lock()
			kinds[errs.KindOf(err)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if kinds[errs.Unauthenticated] > PairFree || kinds[errs.Unauthenticated]+kinds[errs.RateLimited] != 60 {
		t.Fatalf("60 parallel wrong passwords: %v; want at most %d checked (401), the rest 429", kinds, PairFree)
	}
}

// Nobody can lock a user out (issue 27 item 2): after 60 failures from
// twelve other addresses, the right password from a fresh address signs
// in. The addresses that failed wait, longer each time.
func TestFailuresElsewhereDoNotLockOut(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	now := time.Now().UTC()
	for i := range 60 {
		addr := fmt.Sprintf("198.51.100.%d", i/PairFree)
		if _, err := db.Login(ctx, "o@acme.test", "wrong password!", "", addr, now); !errs.Is(err, errs.Unauthenticated) {
			t.Fatalf("failure %d from %s: %v", i, addr, err)
		}
	}
	if _, err := db.Login(ctx, "o@acme.test", "a long password", "", "192.0.2.44", now); err != nil {
		t.Fatalf("the right password from a fresh address after 60 failures elsewhere: %v", err)
	}
	// The pair that failed waits 1 s, then 2 s, then 4 s...
	pair := "198.51.100.0"
	if _, err := db.Login(ctx, "o@acme.test", "a long password", "", pair, now); !errs.Is(err, errs.RateLimited) {
		t.Fatalf("a throttled pair at once: %v", err)
	}
	at := now.Add(time.Second)
	if _, err := db.Login(ctx, "o@acme.test", "wrong password!", "", pair, at); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("after 1 s: %v", err)
	}
	if _, err := db.Login(ctx, "o@acme.test", "a long password", "", pair, at.Add(time.Second)); !errs.Is(err, errs.RateLimited) {
		t.Fatalf("the second wait is longer than 1 s: %v", err)
	}
	if _, err := db.Login(ctx, "o@acme.test", "a long password", "", pair, at.Add(2*time.Second)); err != nil {
		t.Fatalf("after the 2 s wait: %v", err)
	}
	// A success clears the pair.
	if _, err := db.Login(ctx, "o@acme.test", "wrong password!", "", pair, at.Add(2*time.Second)); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("after a success: %v", err)
	}
}

// Successful sign-ins do not count against an address (every user behind
// a proxy shares one).
func TestSuccessesDoNotThrottleAnAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("105 password hashes: slow under -race -short")
	}
	ctx := context.Background()
	db, _ := openDB(t)
	now := time.Now().UTC()
	for i := range AddrFree + 5 {
		if _, err := db.Login(ctx, "o@acme.test", "a long password", "", "10.0.0.1", now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatalf("sign-in %d: %v", i, err)
		}
	}
}

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, 0}, {4, 0}, {5, time.Second}, {6, 2 * time.Second}, {10, 32 * time.Second}, {20, 15 * time.Minute}, {1000, 15 * time.Minute}} {
		if got := backoff(c.n, 5, 1, 15*time.Minute); got != c.want {
			t.Errorf("backoff(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}
