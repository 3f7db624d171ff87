package dial

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// pushbackDialer refuses its first n dials with carrier pushback and
// answers the others at once, recording when each dial started.
type pushbackDialer struct {
	mu     sync.Mutex
	n      int
	starts []time.Time
}

func (d *pushbackDialer) Name() string { return "pushback" }

func (d *pushbackDialer) Dial(_ context.Context, c Call, _ func(Progress)) (Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.starts = append(d.starts, time.Now())
	if d.n > 0 {
		d.n--
		return Result{}, &Pushback{Reason: "SIP 503 Service Unavailable (Retry-After 10)", RetryAfter: 10 * time.Second}
	}
	return Result{Status: StatusCompleted}, nil
}

// Carrier pushback slows the dial pace (each refusal doubles the interval
// between dial starts) for the carrier's Retry-After, then the pace
// recovers step by step to the configured one; the log says so.
func TestPushbackSlowsThenRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db := storetest.Open(t, dbtest.Path(t, "q.db"))
		db.Conn().Listener().Disable() // a synctest bubble: no goroutine may wait on the network
		seedDue(t, db, 300, time.Now())
		if _, err := db.Calls.PromoteDueCalls(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		logs := &testbin.Buffer{}
		d := &pushbackDialer{n: 2}
		q := NewQueue(QueueConfig{DB: deps(db), Dialer: d, CPS: 10, MaxConcurrent: 5, Lease: -1, Poll: time.Hour,
			Log: slog.New(slog.NewTextHandler(logs, nil))})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { q.Run(runCtx); close(done) }()
		t0 := time.Now()
		time.Sleep(5 * time.Second) // synctest: fake time, no wall time passes
		if f := q.Slowdown(); f != 4 {
			t.Errorf("slowdown %d after two pushbacks, want 4", f)
		}
		time.Sleep(60 * time.Second) // synctest: the minute of fake time the slowdown recovers in
		cancel()
		<-done
		if f := q.Slowdown(); f != 1 {
			t.Errorf("slowdown %d a minute later, want 1 (recovered)", f)
		}

		d.mu.Lock()
		defer d.mu.Unlock()
		gapAt := func(at time.Duration) time.Duration { // the gap between dial starts around t0+at
			for i := 1; i < len(d.starts); i++ {
				if d.starts[i].Sub(t0) >= at {
					return d.starts[i].Sub(d.starts[i-1])
				}
			}
			return 0
		}
		for _, c := range []struct{ at, want time.Duration }{
			{3 * time.Second, 400 * time.Millisecond},  // two pushbacks: 4x slower
			{15 * time.Second, 200 * time.Millisecond}, // one hold later: 2x
			{25 * time.Second, 100 * time.Millisecond}, // recovered: 10 cps
		} {
			if got := gapAt(c.at); got != c.want {
				t.Errorf("gap between dials at %s: %s, want %s", c.at, got, c.want)
			}
		}
		out := logs.String()
		for _, want := range []string{"carrier pushback, slowing down", "pace recovered after carrier pushback"} {
			if !strings.Contains(out, want) {
				t.Errorf("log lacks %q:\n%s", want, out)
			}
		}
	})
}
