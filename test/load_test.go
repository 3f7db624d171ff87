package test

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Load test sizes. Writes are upserts over fixed pools of externalIds, so
// the data set (and with it the in-memory vector indexes) stays the same
// size during the run and RSS growth means a leak, not more data.
const (
	loadClients   = 32
	loadSources   = 100 // knowledge sources, upserted with new content
	loadListings  = 400 // listings, re-synced with new prices
	loadRSSSlack  = 24 << 10
	loadRSSGrowth = 0.20
)

// loadOp is one kind of request of the mix.
type loadOp struct {
	label  string
	weight int
	want   int
	req    func(rng *rand.Rand) (method, path string, body any)
}

// TestLoad runs a bounded mixed workload (reads, writes, knowledge and
// listing searches, outbound calls on the sim dialer) from 32 concurrent
// clients for AGENTD_LOAD_SECONDS (default 10; 60 in the full variant),
// then checks: no 5xx and no other unexpected status, no "database is
// locked" in any answer or in the server log, and the child's RSS at the end
// within 20% (or 24 MiB, whichever is larger: short runs and the Go heap's
// step-wise growth) of its RSS after the first quarter of the run. It logs
// p50/p99 latency per endpoint.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load run skipped with -short")
	}
	secs := envInt(t, "AGENTD_LOAD_SECONDS", 10)
	s := start(t, t.TempDir(), "--dialer", "sim", "--sim-call-seconds", "1", "--dial-cps", "50", "--max-concurrent-calls", "50")
	key := s.newKey(100000)
	agent, coll := loadSeed(t, s, key)
	t.Logf("seeded %d sources, %d listings; running %d clients for %d s", loadSources, loadListings, loadClients, secs)

	var callMu sync.Mutex
	var callIDs []string
	words := []string{"return", "shipping", "warranty", "chair", "table", "oak", "red", "delivery", "refund", "policy"}
	ops := []loadOp{
		{"GET /api/v1/agents", 8, 200, func(*rand.Rand) (string, string, any) { return "GET", "/api/v1/agents?limit=20", nil }},
		{"GET /api/v2/agents", 4, 200, func(*rand.Rand) (string, string, any) { return "GET", "/api/v2/agents", nil }},
		{"GET /api/v1/kb/sources", 8, 200, func(rng *rand.Rand) (string, string, any) {
			return "GET", fmt.Sprintf("/api/v1/kb/sources?collectionId=%s&limit=20&offset=%d", coll, rng.IntN(loadSources)), nil
		}},
		{"GET /api/v1/listings/sync", 3, 200, func(rng *rand.Rand) (string, string, any) {
			return "GET", "/api/v1/listings/sync?category=" + loadCategory(rng.IntN(4)), nil
		}},
		{"GET /api/v1/calls", 4, 200, func(*rand.Rand) (string, string, any) { return "GET", "/api/v1/calls?limit=20", nil }},
		{"GET /api/v1/calls/{id}", 4, 200, func(rng *rand.Rand) (string, string, any) {
			callMu.Lock()
			defer callMu.Unlock()
			if len(callIDs) == 0 { // no call placed yet
				return "GET", "/api/v1/calls?limit=1", nil
			}
			return "GET", "/api/v1/calls/" + callIDs[rng.IntN(len(callIDs))], nil
		}},
		{"POST /api/v1/kb/search", 15, 200, func(rng *rand.Rand) (string, string, any) {
			q := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
			mode := []string{"hybrid", "semantic", "keyword"}[rng.IntN(3)]
			return "POST", "/api/v1/kb/search", map[string]any{"collectionId": coll, "query": q, "limit": 5, "mode": mode}
		}},
		{"GET /api/v1/listings/search", 15, 200, func(rng *rand.Rand) (string, string, any) {
			v := url.Values{"q": {words[rng.IntN(len(words))]}, "limit": {"10"}}
			if rng.IntN(2) == 0 {
				v.Set("category", loadCategory(rng.IntN(4)))
				v.Set("maxPrice", "300")
			}
			if rng.IntN(3) == 0 {
				v.Set("attr.color", []string{"red", "blue", "green"}[rng.IntN(3)])
			}
			return "GET", "/api/v1/listings/search?" + v.Encode(), nil
		}},
		{"POST /api/v1/kb/sources", 8, 200, func(rng *rand.Rand) (string, string, any) {
			n := rng.IntN(loadSources)
			return "POST", "/api/v1/kb/sources", map[string]any{"collectionId": coll, "externalId": fmt.Sprintf("doc-%d", n),
				"title": fmt.Sprintf("Doc %d", n), "content": loadText(n, rng.IntN(1000))}
		}},
		{"POST /api/v1/listings/sync", 8, 200, func(rng *rand.Rand) (string, string, any) {
			items := make([]any, 5)
			for i := range items {
				items[i] = loadListing(rng.IntN(loadListings), rng.IntN(1000))
			}
			return "POST", "/api/v1/listings/sync", map[string]any{"listings": items}
		}},
		{"POST /api/v1/calls/outbound", 3, 201, func(rng *rand.Rand) (string, string, any) {
			phone := fmt.Sprintf("+1415%03d%s", rng.IntN(1000), simSuffixes[rng.IntN(len(simSuffixes))])
			return "POST", "/api/v1/calls/outbound", map[string]any{"agentId": agent, "phoneNumber": phone}
		}},
	}
	weights := 0
	for _, op := range ops {
		weights += op.weight
	}

	lat := &latencies{}
	var mu sync.Mutex
	var problems []string
	var requests atomic.Int64
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	warmAt := time.Now().Add(time.Duration(secs) * time.Second / 4)
	var wg sync.WaitGroup
	for c := range loadClients {
		rng := rand.New(rand.NewPCG(uint64(c), 42))
		wg.Go(func() {
			for time.Now().Before(deadline) {
				w := rng.IntN(weights)
				op := ops[0]
				for _, o := range ops {
					if w -= o.weight; w < 0 {
						op = o
						break
					}
				}
				method, path, body := op.req(rng)
				began := time.Now()
				r, err := s.call(method, path, key, body)
				lat.add(op.label, time.Since(began))
				requests.Add(1)
				bad := ""
				switch {
				case err != nil:
					bad = err.Error()
				case strings.Contains(string(r.body), "database is locked"):
					bad = fmt.Sprintf("%d database is locked: %s", r.status, trunc(r.body))
				case r.status != op.want:
					bad = fmt.Sprintf("%d %s", r.status, trunc(r.body))
				}
				if bad != "" {
					mu.Lock()
					problems = append(problems, op.label+": "+bad)
					mu.Unlock()
					continue
				}
				if op.want == 201 {
					if id, _ := dataField(r, "id").(string); id != "" {
						callMu.Lock()
						callIDs = append(callIDs, id)
						callMu.Unlock()
					}
				}
			}
		})
	}
	// RSS after warm-up, then sampled to the end.
	time.Sleep(time.Until(warmAt)) // a moment of the load's script, not an event
	warm := s.rssKB()
	peak := warm
	sample := time.NewTicker(250 * time.Millisecond)
	for time.Now().Before(deadline) {
		<-sample.C
		peak = max(peak, s.rssKB())
	}
	sample.Stop()
	wg.Wait()
	end := s.rssKB()
	n := requests.Load()

	t.Logf("%d requests in %d s (%.0f/s) from %d clients, %d outbound calls\n%s", n, secs, float64(n)/float64(secs),
		loadClients, len(callIDs), lat.table())
	t.Logf("RSS: %d MiB after warm-up (%d s), %d MiB peak, %d MiB at the end", warm>>10, secs/4, peak>>10, end>>10)
	for i, p := range problems {
		if i == 20 {
			t.Errorf("... %d more", len(problems)-20)
			break
		}
		t.Error(p)
	}
	if allowed := max(int(float64(warm)*loadRSSGrowth), loadRSSSlack); warm > 0 && end-warm > allowed {
		t.Errorf("RSS grew from %d KiB after warm-up to %d KiB at the end (more than %d KiB)", warm, end, allowed)
	}
	logs := s.Logs.String()
	if strings.Contains(logs, "database is locked") {
		t.Errorf("server log mentions database is locked")
	}
	if i := strings.Index(logs, `"level":"ERROR"`); i >= 0 {
		t.Errorf("server logged an error: %s", logs[max(0, i-200):min(len(logs), i+400)])
	}
}

// loadSeed creates the voice agent, the collection with its sources (waits
// until they are processed) and the listings the load runs against.
func loadSeed(t *testing.T, s *server, key string) (agent, coll string) {
	t.Helper()
	r := s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Load", "type": "voice", "status": "active",
		"model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}})
	if r.status != 201 {
		t.Fatalf("create agent: %d %s", r.status, r.body)
	}
	agent = dataID(t, r)
	coll = dataID(t, s.must("POST", "/api/v1/kb/collections", key, map[string]any{"name": "Load"}))
	for i := 0; i < loadSources; i += 50 {
		var batch []any
		for n := i; n < min(i+50, loadSources); n++ {
			batch = append(batch, map[string]any{"externalId": fmt.Sprintf("doc-%d", n), "title": fmt.Sprintf("Doc %d", n),
				"content": loadText(n, 0)})
		}
		if r := s.must("POST", "/api/v1/kb/sources/batch", key, map[string]any{"collectionId": coll, "sources": batch}); r.status != 200 {
			t.Fatalf("seed sources: %d %s", r.status, trunc(r.body))
		}
	}
	items := make([]any, loadListings)
	for i := range items {
		items[i] = loadListing(i, 0)
	}
	if r := s.must("POST", "/api/v1/listings/sync", key, map[string]any{"listings": items}); r.status != 200 {
		t.Fatalf("seed listings: %d %s", r.status, trunc(r.body))
	}
	if !waitFor(60*time.Second, func() bool {
		return total(s.must("GET", "/api/v1/kb/sources?limit=1&status=completed&collectionId="+coll, key, nil)) == loadSources
	}) {
		t.Fatalf("seeded sources not processed within 60 s")
	}
	return agent, coll
}

func loadCategory(i int) string { return []string{"chairs", "tables", "lamps", "sofas"}[i%4] }

func loadListing(n, v int) map[string]any {
	return map[string]any{"externalId": fmt.Sprintf("sku-%d", n), "title": fmt.Sprintf("%s %d oak", loadCategory(n), n),
		"description": "Solid oak with free delivery and a two year warranty.", "category": loadCategory(n),
		"price": float64(20+n%300) + float64(v%100)/100, "attributes": map[string]any{
			"color": []string{"red", "blue", "green"}[n%3], "seats": n % 6, "outdoor": n%2 == 0}}
}

// loadText is a source of about 600 tokens; v varies it so an upsert is a
// real update that is chunked and embedded again.
func loadText(n, v int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Document %d (revision %d)\n\n", n, v)
	for i := range 8 {
		fmt.Fprintf(&b, "## Part %d\n\nOur return policy gives %d days for a refund. The warranty on chair %d covers "+
			"the oak frame; shipping and delivery are free above %d euros.\n\n", i, 14+(n+i+v)%30, n, 50+v%50)
	}
	return b.String()
}
