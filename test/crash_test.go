package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/testbin"
)

// crashFlags run the sim dialer fast: short talks, a dial rate and
// concurrency well above the workload, a short claim lease so attempts cut
// off by a kill are settled soon after the restart, and a dial log that
// records every attempt dialled. The knowledge worker's lease is shortened
// too when the binary has a flag for it (see kbLeaseFlag).
func crashFlags(t testing.TB, dir string) []string {
	f := []string{"--dialer", "sim", "--sim-call-seconds", "0.3", "--dial-cps", "50",
		"--max-concurrent-calls", "40", "--dial-lease", "2s", "--dial-log", filepath.Join(dir, "dial.log")}
	if kbLeaseFlag(t) != "" {
		f = append(f, kbLeaseFlag(t), "2s")
	}
	return f
}

// kbLeaseFlag is the serve flag that sets the knowledge worker's claim lease,
// or "" when the binary has none: a source a killed process was processing
// then stays "processing" until the built-in lease (2 min) runs out.
func kbLeaseFlag(t testing.TB) string {
	out, errOut, err := testbin.Run(agentdBin, "", nil, "serve", "--help")
	if err != nil {
		t.Fatalf("serve --help: %v\n%s%s", err, out, errOut)
	}
	for _, f := range []string{"--kb-lease", "--kb-worker-lease", "--embed-lease"} {
		if strings.Contains(out, f+" ") {
			return f
		}
	}
	return ""
}

// ledger records every write the server acknowledged with a 2xx.
type ledger struct {
	mu        sync.Mutex
	sources   map[string]string // externalId -> documentId
	listings  map[string]bool   // externalId
	calls     []string          // call ids, in order
	callSet   map[string]bool
	cancelled map[string]bool // call ids whose DELETE answered 200
	unknown   map[string]int  // writes cut off by a kill (outcome unknown), by kind
	bad       []string        // unexpected answers: 5xx, lost ids, wrong shapes
	batches   int
}

func (l *ledger) badf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bad = append(l.bad, fmt.Sprintf(format, args...))
}

// crashClient streams writes at one server life until it dies or stop closes.
type crashClient struct {
	s     *server
	key   string
	coll  string
	agent string
	led   *ledger
	cycle int
	seq   *atomic.Int64 // unique externalId numbers across lives
	stop  chan struct{}
}

// pause paces the workload by d, and reports false when the client is
// stopped meanwhile.
func (c *crashClient) pause(d time.Duration) bool {
	select {
	case <-c.stop:
		return false
	case <-time.After(d):
		return true
	}
}

func (c *crashClient) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// loop runs step until stop, or until the server stops answering (the
// kill); step reports false when its request got no answer.
func (c *crashClient) loop(kind string, step func() bool) {
	for !c.stopped() {
		if !step() {
			c.led.mu.Lock()
			c.led.unknown[kind]++
			c.led.mu.Unlock()
			return
		}
	}
}

// answerOK checks a write's answer: want on success, and never a 5xx.
func (c *crashClient) answerOK(what string, r resp, want ...int) bool {
	for _, w := range want {
		if r.status == w {
			return true
		}
	}
	c.led.badf("life %d: %s answered %d %s", c.cycle, what, r.status, trunc(r.body))
	return false
}

func (c *crashClient) upsertSource() bool {
	ext := fmt.Sprintf("src-%d", c.seq.Add(1))
	r, err := c.s.call("POST", "/api/v1/kb/sources", c.key, map[string]any{"collectionId": c.coll, "externalId": ext,
		"title": "Doc " + ext, "content": sourceText(ext), "metadata": map[string]any{"life": c.cycle}})
	if err != nil {
		return false
	}
	if c.answerOK("POST source "+ext, r, 200) {
		id, _ := dataField(r, "documentId").(string)
		c.led.mu.Lock()
		c.led.sources[ext] = id
		c.led.mu.Unlock()
	}
	return true
}

func (c *crashClient) syncListings() bool {
	var items []any
	var exts []string
	for range 3 {
		ext := fmt.Sprintf("lst-%d", c.seq.Add(1))
		exts = append(exts, ext)
		items = append(items, map[string]any{"externalId": ext, "title": "Chair " + ext, "category": lifeCategory(c.cycle),
			"price": 10 + float64(len(exts)), "attributes": map[string]any{"color": "red", "life": c.cycle}})
	}
	r, err := c.s.call("POST", "/api/v1/listings/sync", c.key, map[string]any{"listings": items})
	if err != nil {
		return false
	}
	if c.answerOK("POST listings/sync", r, 200) {
		c.led.mu.Lock()
		for _, e := range exts {
			c.led.listings[e] = true
		}
		c.led.mu.Unlock()
	}
	return true
}

// lifeCategory keeps each server life's listings in their own category, so
// the final check reads them per category, below the 10,000 rows one
// GET /api/v1/listings/sync returns.
func lifeCategory(life int) string { return fmt.Sprintf("life-%d", life) }

// simSuffixes pick the sim dialer's outcome: busy, no answer, failed, and
// two answered numbers for every refused one.
var simSuffixes = []string{"0486", "0408", "0500", "1234", "5678", "2468"}

func (c *crashClient) batchCalls(rng *rand.Rand) bool {
	// Paced to about 8 calls a second, which the dial queue (40 at once,
	// 1.3 s each) keeps up with, so the final settle stays short.
	if !c.pause(time.Duration(100+rng.IntN(200)) * time.Millisecond) {
		return true
	}
	var calls []any
	for range 1 + rng.IntN(3) {
		calls = append(calls, map[string]any{"contactPhone": fmt.Sprintf("+1415%03d%s", rng.IntN(1000), simSuffixes[rng.IntN(len(simSuffixes))])})
	}
	body := map[string]any{"agentId": c.agent, "calls": calls}
	if rng.IntN(2) == 0 {
		// Two retries at once (past times mean "as soon as possible"), also
		// after failures, so interrupted attempts are retried too.
		now := time.Now().UTC().Format(time.RFC3339)
		body["retryConfig"] = map[string]any{"retryOnFailed": true}
		body["retrySchedule"] = []string{now, now}
	}
	r, err := c.s.call("POST", "/api/v1/calls/batch", c.key, body)
	if err != nil {
		return false
	}
	if !c.answerOK("POST calls/batch", r, 201) {
		return true
	}
	res, _ := dataField(r, "results").([]any)
	if len(res) != len(calls) {
		c.led.badf("life %d: batch of %d answered %d results: %s", c.cycle, len(calls), len(res), trunc(r.body))
	}
	c.led.mu.Lock()
	defer c.led.mu.Unlock()
	c.led.batches++
	for _, x := range res {
		m, _ := x.(map[string]any)
		if id, _ := m["callId"].(string); id != "" {
			c.led.calls = append(c.led.calls, id)
			c.led.callSet[id] = true
		} else {
			c.led.bad = append(c.led.bad, fmt.Sprintf("life %d: batch result without callId: %v", c.cycle, m))
		}
	}
	return true
}

func (c *crashClient) cancelCall(rng *rand.Rand) bool {
	// About one call in four gets a cancel; the rest dial to their end.
	if !c.pause(time.Duration(200+rng.IntN(400)) * time.Millisecond) {
		return true
	}
	c.led.mu.Lock()
	if len(c.led.calls) == 0 {
		c.led.mu.Unlock()
		return true
	}
	// Mostly recent calls, which are still queued or dialling.
	n := len(c.led.calls)
	id := c.led.calls[n-1-rng.IntN(min(n, 6))]
	c.led.mu.Unlock()
	r, err := c.s.call("DELETE", "/api/v1/calls/"+id, c.key, nil)
	if err != nil {
		return false
	}
	if c.answerOK("DELETE call "+id, r, 200, 409) && r.status == 200 {
		c.led.mu.Lock()
		c.led.cancelled[id] = true
		c.led.mu.Unlock()
	}
	return true
}

// TestCrashSafety kills agentd with SIGKILL at random moments while a client
// streams knowledge upserts, listing syncs, call batches and cancels, then
// restarts it on the same database, AGENTD_CRASH_KILLS times (default 20).
// At the end every acknowledged write must be there exactly once,
// background work must settle to final states, no call attempt may have
// been dialled twice, and a SQLite file must pass PRAGMA integrity_check.
// With AGENTD_TEST_POSTGRES set it runs on PostgreSQL (see checkCrashDB).
func TestCrashSafety(t *testing.T) {
	kills := envInt(t, "AGENTD_CRASH_KILLS", 20)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("AGENTD_CRASH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("AGENTD_CRASH_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay the kill moments with AGENTD_CRASH_SEED=%d), %d kills", seed, seed, kills)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	flags := crashFlags(t, dir)

	s := start(t, dir, flags...)
	key := s.newKey(100000)
	coll := dataID(t, s.must("POST", "/api/v1/kb/collections", key, map[string]any{"name": "Crash"}))
	ar := s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Dialer", "type": "voice", "status": "active",
		"model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}})
	if ar.status != 201 {
		t.Fatalf("create agent: %d %s", ar.status, ar.body)
	}
	agent := dataID(t, ar)

	led := &ledger{sources: map[string]string{}, listings: map[string]bool{}, callSet: map[string]bool{},
		cancelled: map[string]bool{}, unknown: map[string]int{}}
	var seq atomic.Int64
	var restarts []time.Duration // kill to healthy again
	began := time.Now()
	for cycle := range kills {
		if cycle > 0 {
			t0 := time.Now()
			s = start(t, dir, flags...)
			restarts = append(restarts, time.Since(t0))
		}
		c := &crashClient{s: s, key: key, coll: coll, agent: agent, led: led, cycle: cycle, seq: &seq, stop: make(chan struct{})}
		var wg sync.WaitGroup
		for i, kind := range []string{"source", "listings", "calls", "cancel"} {
			wrng := rand.New(rand.NewPCG(seed, uint64(cycle*16+i+1)))
			wg.Go(func() {
				switch kind {
				case "source":
					c.loop(kind, c.upsertSource)
				case "listings":
					c.loop(kind, c.syncListings)
				case "calls":
					c.loop(kind, func() bool { return c.batchCalls(wrng) })
				case "cancel":
					c.loop(kind, func() bool { return c.cancelCall(wrng) })
				}
			})
		}
		// One kill in five lands right after start-up (recovery still
		// running); the others while the workload is in full flow, some
		// after sim calls (1.3 s) could complete.
		delay := time.Duration(300+rng.IntN(2000)) * time.Millisecond
		if rng.IntN(5) == 0 {
			delay = time.Duration(rng.IntN(100)) * time.Millisecond
		}
		time.Sleep(delay) // the kill's random moment is the test's input, not a wait for an event
		s.Kill()
		close(c.stop)
		wg.Wait()
		logProblems(led, cycle, s.Logs.String())
	}
	t.Logf("%d kills survived in %s: acknowledged %d sources, %d listings, %d calls in %d batches, %d cancels; cut off by a kill: %v",
		kills, time.Since(began).Round(time.Millisecond), len(led.sources), len(led.listings), len(led.calls), led.batches,
		len(led.cancelled), led.unknown)
	slices.Sort(restarts)
	if len(restarts) > 0 {
		t.Logf("restart after SIGKILL until /healthz answers: p50 %s, max %s", restarts[len(restarts)/2].Round(time.Millisecond),
			restarts[len(restarts)-1].Round(time.Millisecond))
	}

	s = start(t, dir, flags...)
	settled := time.Now()
	limit := settleLimit
	if kbLeaseFlag(t) == "" {
		// Sources a killed process was processing wait for its lease.
		limit = kbLease + settleLimit
		t.Logf("no knowledge lease flag in this binary: waiting up to %s for sources held by killed processes", limit)
	}
	checkAcknowledged(t, s, key, coll, led, limit, kills)
	t.Logf("settled and checked in %s", time.Since(settled).Round(time.Millisecond))
	if err := s.Stop(15 * time.Second); err != nil {
		t.Errorf("final SIGTERM stop: %v", err)
	}
	logProblems(led, kills, s.Logs.String())
	checkCrashDB(t, s.db, filepath.Join(dir, "dial.log"))
	for i, b := range led.bad {
		if i == 20 {
			t.Errorf("... %d more", len(led.bad)-20)
			break
		}
		t.Error(b)
	}
}

// logProblems records error-level lines and "database is locked" from one
// server life's log: a crash must never leave the next life failing.
func logProblems(led *ledger, life int, logs string) {
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, "database is locked") {
			led.badf("life %d logged: %s", life, l)
		}
	}
}

// sourceText is a few hundred words of Markdown, so chunking and
// embedding take real work and a kill can land in the middle of it.
func sourceText(ext string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", ext)
	for i := range 12 {
		fmt.Fprintf(&b, "## Section %d\n\nThe return policy of %s allows returns within %d days. Shipping is free above %d euros, "+
			"and every order is tracked until it arrives at the customer's door.\n\n", i, ext, 14+i, 50+i)
	}
	return b.String()
}

// dataField is data.<name> of a JSON answer.
func dataField(r resp, name string) any {
	d, _ := r.json()["data"].(map[string]any)
	return d[name]
}
