package test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// hookLog is what a slow receiver saw: every request, checked on arrival.
type hookLog struct {
	mu      sync.Mutex
	first   map[string]int    // event id -> index of its first arrival
	bodies  map[string]string // event id -> body of its first arrival
	order   []string          // event ids in order of first arrival
	count   map[string]int    // event id -> arrivals
	bad     []string
	verify  *standardwebhooks.Webhook
	delayMS int
}

func (h *hookLog) badf(format string, args ...any) {
	h.bad = append(h.bad, fmt.Sprintf(format, args...))
}

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	// Slow: a kill often lands while requests are in flight (the body is
	// received all the same when the sender goes away meanwhile).
	select {
	case <-time.After(time.Duration(rand.IntN(h.delayMS)) * time.Millisecond):
	case <-r.Context().Done():
	}
	var ev struct{ ID, Type string }
	json.Unmarshal(body, &ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.verify != nil {
		if err := h.verify.Verify(body, r.Header); err != nil {
			h.badf("%s %s: signature: %v", ev.Type, ev.ID, err)
		}
	}
	id := r.Header.Get("webhook-id")
	if id != ev.ID {
		h.badf("webhook-id %q carries event %q", id, ev.ID)
	}
	if h.count[ev.ID] == 0 {
		h.first[ev.ID] = len(h.order)
		h.order = append(h.order, ev.ID)
		h.bodies[ev.ID] = string(body)
	} else if h.bodies[ev.ID] != string(body) {
		h.badf("event %s delivered twice with different bodies", ev.ID)
	}
	h.count[ev.ID]++
	w.WriteHeader(http.StatusNoContent)
}

// loggedEvent is an entry of GET /api/v2/events.
type loggedEvent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		ID string `json:"id"`
	} `json:"data"`
}

// allEvents pulls the whole log through the API, page by page.
func allEvents(t testing.TB, s *server, key string) []loggedEvent {
	var out []loggedEvent
	after := ""
	for {
		r := s.must("GET", "/api/v2/events?limit=500&after="+after, key, nil)
		var page struct {
			Data struct {
				Events     []loggedEvent `json:"events"`
				NextCursor *string       `json:"nextCursor"`
				HasMore    bool          `json:"hasMore"`
			} `json:"data"`
		}
		if r.status != 200 || json.Unmarshal(r.body, &page) != nil {
			t.Fatalf("events: %d %s", r.status, trunc(r.body))
		}
		out = append(out, page.Data.Events...)
		if !page.Data.HasMore {
			return out
		}
		after = *page.Data.NextCursor
	}
}

// TestWebhookDeliveryCrashSafety kills agentd with SIGKILL at random moments
// (AGENTD_WEBHOOK_KILLS, default 12) while calls, knowledge upserts and
// pings make events and a slow receiver takes them, restarting it on the
// same database each time. At the end every event in the log (every event
// committed before any kill) has reached the receiver at least once, each
// with a valid signature, a duplicate always with the same webhook-id and
// body, and each call's events first arrived in the order they were logged.
func TestWebhookDeliveryCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kill test: skipped with -short")
	}
	kills := envInt(t, "AGENTD_WEBHOOK_KILLS", 12)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("AGENTD_CRASH_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (AGENTD_CRASH_SEED), %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(seed, 1))

	hooks := &hookLog{first: map[string]int{}, bodies: map[string]string{}, count: map[string]int{}, delayMS: 300}
	rcv := httptest.NewServer(hooks)
	defer rcv.Close()
	dir := t.TempDir()
	flags := []string{"--dialer", "sim", "--sim-call-seconds", "0.2", "--dial-cps", "50", "--max-concurrent-calls", "40",
		"--dial-lease", "2s", "--webhook-allow-private", "--webhook-timeout", "2s", "--webhook-lease", "3s",
		"--webhook-poll", "100ms"}
	s := start(t, dir, flags...)
	key := s.newKey(100000)
	wh := s.must("POST", "/api/v2/webhooks", key, map[string]any{"url": rcv.URL + "/hooks", "events": []string{"*"}})
	if wh.status != 201 {
		t.Fatalf("create webhook: %d %s", wh.status, wh.body)
	}
	whID := dataID(t, wh)
	secret, _ := dataField(wh, "secret").(string)
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	hooks.mu.Lock()
	hooks.verify = v
	hooks.mu.Unlock()
	coll := dataID(t, s.must("POST", "/api/v1/kb/collections", key, map[string]any{"name": "Hooks"}))
	agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Dialer", "type": "voice",
		"status": "active", "model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}}))

	n := 0
	for life := range kills {
		if life > 0 {
			s = start(t, dir, flags...)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			wr := rand.New(rand.NewPCG(seed, uint64(life+10)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch wr.IntN(4) {
				case 0, 1:
					calls := []any{}
					for range 1 + wr.IntN(3) {
						calls = append(calls, map[string]any{"contactPhone": fmt.Sprintf("+1415%03d%s", wr.IntN(1000),
							simSuffixes[wr.IntN(len(simSuffixes))])})
					}
					_, err = s.call("POST", "/api/v1/calls/batch", key, map[string]any{"agentId": agent, "calls": calls})
				case 2:
					n++
					_, err = s.call("POST", "/api/v1/kb/sources", key, map[string]any{"collectionId": coll,
						"externalId": fmt.Sprintf("doc-%d-%d", life, n), "title": "Doc", "content": "# Doc\n\nSome text."})
				case 3:
					_, err = s.call("POST", "/api/v2/webhooks/"+whID+"/test", key, nil)
				}
				if err != nil {
					return // killed
				}
				select { // pacing
				case <-stop:
					return
				case <-time.After(time.Duration(50+wr.IntN(150)) * time.Millisecond):
				}
			}
		})
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond) // the kill's random moment: the test's input
		s.Kill()
		close(stop)
		wg.Wait()
	}

	// Last life: let calls settle and every logged event reach the receiver.
	s = start(t, dir, flags...)
	var logged []loggedEvent
	var missing []string
	ok := waitFor(90*time.Second, func() bool {
		_, calls := pendingWork(t, s, key, coll)
		if calls > 0 {
			return false
		}
		logged = allEvents(t, s, key)
		hooks.mu.Lock()
		defer hooks.mu.Unlock()
		missing = missing[:0]
		for _, e := range logged {
			if hooks.count[e.ID] == 0 {
				missing = append(missing, e.Type+" "+e.ID)
			}
		}
		return len(missing) == 0
	})
	if !ok {
		t.Fatalf("%d of %d logged events never reached the receiver, e.g. %v", len(missing), len(logged), missing[:min(5, len(missing))])
	}
	if err := s.Stop(15 * time.Second); err != nil {
		t.Errorf("final stop: %v", err)
	}

	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	dups := 0
	for _, c := range hooks.count {
		dups += c - 1
	}
	// A call's events first arrived in log order.
	lastOf := map[string]int{}
	for _, e := range logged {
		if len(e.Type) < 5 || e.Type[:5] != "call." {
			continue
		}
		at := hooks.first[e.ID]
		if prev, ok := lastOf[e.Data.ID]; ok && at < prev {
			t.Errorf("call %s: %s (%s) arrived before an earlier event of the call", e.Data.ID, e.Type, e.ID)
		}
		lastOf[e.Data.ID] = at
	}
	for i, b := range hooks.bad {
		if i == 20 {
			break
		}
		t.Error(b)
	}
	t.Logf("%d kills: %d events logged, all delivered; %d duplicate deliveries (same webhook-id and body), %d calls",
		kills, len(logged), dups, len(lastOf))
	if len(logged) < 10*kills {
		t.Errorf("only %d events: the workload did not run", len(logged))
	}
}
