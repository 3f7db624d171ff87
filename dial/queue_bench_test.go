package dial

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/callstore"
)

// instantDialer completes every call at once and closes all when the
// want-th call was dialled. The dial times and their order are read back
// from the claims (started_at) afterwards: Dial runs on its own goroutine,
// later than the claim.
type instantDialer struct {
	mu   sync.Mutex
	n    int
	want int
	all  chan struct{}
	at   []time.Time
	prio []int
}

func (d *instantDialer) Name() string { return "instant" }

func (d *instantDialer) Dial(_ context.Context, c Call, _ func(Progress)) (Result, error) {
	d.mu.Lock()
	d.n++
	if d.n == d.want {
		close(d.all)
	}
	d.mu.Unlock()
	return Result{Status: StatusCompleted}, nil
}

// seedDue stores n calls due at `at` (scheduled) with priorities cycling
// 0..10, and returns the org and id -> priority.
func seedDue(tb testing.TB, db *storage.Stores, n int, at time.Time) (string, map[string]int) {
	ctx := context.Background()
	orgID, agentID := seedAgent(tb, db)
	calls := make([]callstore.Call, n)
	for i := range calls {
		calls[i] = callstore.Call{OrgID: orgID, AgentID: agentID, Status: callstore.CallInitiated,
			PhoneNumber: fmt.Sprintf("+1415%07d", i), Priority: (i * 7) % 11, DueAt: at}
	}
	created, err := db.Calls.CreateCalls(ctx, calls)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int{}
	for _, c := range created {
		out[c.ID] = c.Priority
	}
	return orgID, out
}

// runPaced dials every due call through a Queue; run it inside a synctest
// bubble, whose clock moves only when every goroutine in it waits (here on
// the queue's pacing timer), so the simulated times are exact whatever the
// real speed. It returns the dialer's record and the start time.
func runPaced(tb testing.TB, n int, cps float64) (*instantDialer, time.Time) {
	db, err := storage.Open(context.Background(), dbtest.Path(tb, "q.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.Conn().Listener().Disable() // a synctest bubble: no goroutine may wait on the network
	t0 := time.Now().UTC()
	orgID, ids := seedDue(tb, db, n, t0)
	// All fall due at once: one promotion moves them to queued.
	if q, err := db.Calls.PromoteDueCalls(context.Background(), t0); err != nil || q != int64(n) {
		tb.Fatalf("promoted %d, %v", q, err)
	}
	d := &instantDialer{want: n, all: make(chan struct{})}
	q := NewQueue(QueueConfig{DB: deps(db), Dialer: d, CPS: cps, MaxConcurrent: 10, Lease: -1, Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	// The queue waits either for its token or (when idle) for its poll; only
	// the first may happen before every call was dialled, or the rate fails.
	<-d.all
	cancel()
	<-done
	type dialed struct {
		at   time.Time
		prio int
	}
	var ds []dialed
	for id, prio := range ids {
		c, err := db.Calls.GetCall(context.Background(), orgID, id)
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

// pacing is what one paced run measured, passed from the child test
// process of BenchmarkDialPacing back to it.
type pacing struct {
	Rate, WorstPct, SimSeconds float64
}

// 300 calls due at once, dialled at 50 cps in a synctest bubble: rate
// within 2%, priority order kept. DIAL_PACING_N and DIAL_PACING_OUT (set
// by BenchmarkDialPacing) change the count and write the measures.
func TestQueuePacingAndPriority(t *testing.T) {
	const cps = 50.0
	n := 300
	if s := os.Getenv("DIAL_PACING_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("DIAL_PACING_N: %v", err)
		}
	}
	var m pacing
	synctest.Test(t, func(t *testing.T) {
		d, t0 := runPaced(t, n, cps)
		rate, worst := checkPacing(t, d, t0, n, cps)
		m = pacing{rate, worst * 100, d.at[n-1].Sub(t0).Seconds()}
	})
	t.Logf("%d calls at %.2f cps simulated over %.1f s", n, m.Rate, m.SimSeconds)
	if out := os.Getenv("DIAL_PACING_OUT"); out != "" {
		b, _ := json.Marshal(m)
		if err := os.WriteFile(out, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkDialPacing: 10,000 calls due at once, dialled at 50 cps on the
// fake clock of a synctest bubble (200 s simulated): rate within 2%,
// priority order kept. synctest bubbles exist only under testing.T, so each
// round runs TestQueuePacingAndPriority with 10,000 calls in a child test
// process and reports what it measured.
func BenchmarkDialPacing(b *testing.B) {
	out := filepath.Join(b.TempDir(), "pacing.json")
	for b.Loop() {
		c := exec.Command(os.Args[0], "-test.run=^TestQueuePacingAndPriority$", "-test.count=1", "-test.timeout=30m")
		c.Env = append(os.Environ(), "DIAL_PACING_N=10000", "DIAL_PACING_OUT="+out)
		if msg, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, msg)
		}
		raw, err := os.ReadFile(out)
		var m pacing
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(m.Rate, "sim-cps")
		b.ReportMetric(m.WorstPct, "worst-dev-%")
		b.ReportMetric(m.SimSeconds, "sim-seconds")
	}
}
