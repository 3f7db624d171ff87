package dial

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/storage"
)

// instantDialer completes every call at once. The dial times and their
// order are read back from the claims (started_at) afterwards: Dial runs on
// its own goroutine, later than the claim in real and in fake time.
type instantDialer struct {
	mu   sync.Mutex
	n    int
	at   []time.Time
	prio []int
}

func (d *instantDialer) Name() string { return "instant" }

func (d *instantDialer) Dial(_ context.Context, c Call, _ func(Progress)) (Result, error) {
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
	return Result{Status: StatusCompleted}, nil
}

// seedDue stores n calls due at `at` (scheduled) with priorities cycling
// 0..10, and returns the org and id -> priority.
func seedDue(tb testing.TB, db *storage.DB, n int, at time.Time) (string, map[string]int) {
	ctx := context.Background()
	orgID, agentID := seedAgent(tb, db)
	calls := make([]storage.Call, n)
	for i := range calls {
		calls[i] = storage.Call{OrgID: orgID, AgentID: agentID, Status: storage.CallInitiated,
			PhoneNumber: fmt.Sprintf("+1415%07d", i), Priority: (i * 7) % 11, DueAt: at}
	}
	created, err := db.CreateCalls(ctx, calls)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int{}
	for _, c := range created {
		out[c.ID] = c.Priority
	}
	return orgID, out
}

// runPaced dials every due call through a Queue on a fake clock and
// returns the dialer's record. It advances the clock only when the queue
// waits on it, so the simulated times are exact whatever the real speed.
func runPaced(tb testing.TB, n int, cps float64) (*instantDialer, time.Time) {
	db, err := storage.Open(context.Background(), filepath.Join(tb.TempDir(), "q.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	clk := NewFakeClock(t0)
	orgID, ids := seedDue(tb, db, n, t0)
	// All fall due at once: one promotion moves them to queued.
	if q, err := db.PromoteDueCalls(context.Background(), t0); err != nil || q != int64(n) {
		tb.Fatalf("promoted %d, %v", q, err)
	}
	d := &instantDialer{}
	q := NewQueue(QueueConfig{DB: db, Dialer: d, Clock: clk, CPS: cps, MaxConcurrent: 10, Lease: -1, Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	for {
		d.mu.Lock()
		got := d.n
		d.mu.Unlock()
		if got == n {
			break
		}
		if err := clk.WaitPending(ctx, 1); err != nil {
			tb.Fatal(err)
		}
		// The queue waits either for its token or (when idle) for its poll;
		// only the first is legitimate before every call was dialled.
		clk.AdvanceToNext()
	}
	cancel()
	<-done
	type dialed struct {
		at   time.Time
		prio int
	}
	var ds []dialed
	for id, prio := range ids {
		c, err := db.GetCall(context.Background(), orgID, id)
		if err != nil {
			tb.Fatal(err)
		}
		ds = append(ds, dialed{*c.StartedAt, prio})
	}
	slices.SortFunc(ds, func(a, b dialed) int { return a.at.Compare(b.at) })
	for _, x := range ds {
		d.at, d.prio = append(d.at, x.at), append(d.prio, x.prio)
	}
	return d, t0
}

// checkPacing verifies the dial times against the CPS (within 2% over
// every whole second) and the priority order.
func checkPacing(tb testing.TB, d *instantDialer, t0 time.Time, n int, cps float64) (float64, float64) {
	if len(d.at) != n {
		tb.Fatalf("%d dials, want %d", len(d.at), n)
	}
	span := d.at[n-1].Sub(t0).Seconds()
	rate := float64(n-1) / span
	if math.Abs(rate-cps)/cps > 0.02 {
		tb.Errorf("rate %.3f cps, want %.1f within 2%%", rate, cps)
	}
	worst := 0.0
	for s := 1; s <= int(span); s++ {
		edge := t0.Add(time.Duration(s) * time.Second)
		k := 0
		for k < n && d.at[k].Before(edge) {
			k++
		}
		want := cps * float64(s)
		if dev := math.Abs(float64(k)-want) / want; dev > worst {
			worst = dev
		}
	}
	if worst > 0.02 && span >= 50 {
		tb.Errorf("worst cumulative deviation %.2f%%", worst*100)
	}
	for i := 1; i < n; i++ {
		if d.prio[i] < d.prio[i-1] {
			tb.Fatalf("dial %d has priority %d after %d", i, d.prio[i], d.prio[i-1])
		}
	}
	return rate, worst
}

func TestQueuePacingAndPriority(t *testing.T) {
	d, t0 := runPaced(t, 300, 50)
	rate, _ := checkPacing(t, d, t0, 300, 50)
	t.Logf("300 calls at %.2f cps simulated", rate)
}

// BenchmarkDialPacing: 10,000 calls due at once, dialled at 50 cps on a
// fake clock (200 s simulated): rate within 2%, priority order kept.
func BenchmarkDialPacing(b *testing.B) {
	const n, cps = 10000, 50.0
	for b.Loop() {
		d, t0 := runPaced(b, n, cps)
		rate, worst := checkPacing(b, d, t0, n, cps)
		b.ReportMetric(rate, "sim-cps")
		b.ReportMetric(worst*100, "worst-dev-%")
		b.ReportMetric(d.at[n-1].Sub(t0).Seconds(), "sim-seconds")
	}
}
