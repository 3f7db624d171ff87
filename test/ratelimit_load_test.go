package test

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestRateLimitLoad hammers three keys of different limits at once, 16
// goroutines each, over v1 and v2 endpoints, and checks that each key gets
// exactly its limit admitted inside the window (DECISIONS.md: "Exactly the
// limit is admitted per window, also under concurrent requests"), that every
// admitted answer shows a distinct X-RateLimit-Remaining (no admission was
// counted twice or skipped), and that refusals are the documented 429 body on
// v1 and a plain 401 on /v2.
func TestRateLimitLoad(t *testing.T) {
	s := start(t, t.TempDir())
	limits := []int{50, 100, 1000}
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = s.newKey(l)
	}
	endpoints := []string{"/api/v1/agents", "/api/v2/agents", "/api/v1/listings/sync", "/api/v2/api-keys"}
	const workers = 16

	type tally struct {
		mu        sync.Mutex
		admitted  int
		refused   map[string]int // by version
		remaining []int
		bad       []string
	}
	tallies := make([]*tally, len(limits))
	began := time.Now()
	var wg sync.WaitGroup
	for ki, limit := range limits {
		tl := &tally{refused: map[string]int{}}
		tallies[ki] = tl
		total := limit*3/2 + 50
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < total; i += workers {
					path := endpoints[i%len(endpoints)]
					r, err := s.call("GET", path, keys[ki], nil)
					tl.mu.Lock()
					switch {
					case err != nil:
						tl.bad = append(tl.bad, fmt.Sprintf("%s: %v", path, err))
					case r.status == 200:
						tl.admitted++
						n, err := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
						if err != nil || r.header.Get("X-RateLimit-Limit") != strconv.Itoa(limit) {
							tl.bad = append(tl.bad, fmt.Sprintf("%s: 200 with limit headers %q/%q", path,
								r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining")))
						}
						tl.remaining = append(tl.remaining, n)
					default:
						if msg := refusalProblem(path, r, limit); msg != "" {
							tl.bad = append(tl.bad, msg)
						}
						tl.refused[path[5:7]]++
					}
					tl.mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(began)
	if elapsed > 50*time.Second {
		t.Fatalf("the run took %s: too close to the 60 s window to count exactly", elapsed)
	}
	for ki, limit := range limits {
		tl := tallies[ki]
		total := limit*3/2 + 50
		t.Logf("key limit %4d: %d requests, %d admitted, %d refused on v1 (429), %d on v2 (401)",
			limit, total, tl.admitted, tl.refused["v1"], tl.refused["v2"])
		for i, b := range tl.bad {
			if i == 5 {
				t.Errorf("... %d more", len(tl.bad)-5)
				break
			}
			t.Errorf("key limit %d: %s", limit, b)
		}
		if tl.admitted != limit {
			t.Errorf("key limit %d: %d admitted, want exactly %d", limit, tl.admitted, limit)
		}
		if tl.refused["v1"] == 0 || tl.refused["v2"] == 0 {
			t.Errorf("key limit %d: refusals v1=%d v2=%d: both versions should have refused some", limit, tl.refused["v1"], tl.refused["v2"])
		}
		slices.Sort(tl.remaining)
		for i, n := range tl.remaining {
			if n != i {
				t.Errorf("key limit %d: X-RateLimit-Remaining of admitted answers is not 0..%d once each (sorted[%d] = %d)", limit, limit-1, i, n)
				break
			}
		}
	}
	t.Logf("%d keys x %d goroutines, all requests in %s", len(limits), workers, elapsed.Round(time.Millisecond))
}

// refusalProblem describes what is wrong with a refusal, or "" when it is
// the documented one: 429 with the RATE_LIMITED body and Retry-After on v1,
// a plain 401 in the v2 error shape on /v2.
func refusalProblem(path string, r resp, limit int) string {
	body := r.json()
	e, _ := body["error"].(map[string]any)
	if path[:7] == "/api/v2" {
		if r.status != 401 || e == nil || e["status"] != float64(401) || e["code"] == "RATE_LIMITED" || e["message"] == "" {
			return fmt.Sprintf("%s: refusal %d %s, want a plain 401", path, r.status, trunc(r.body))
		}
		return ""
	}
	if r.status != 429 || e == nil || e["code"] != "RATE_LIMITED" || e["status"] != float64(429) ||
		e["retryInSeconds"] != float64(60) || e["timestamp"] == nil || e["message"] == nil {
		return fmt.Sprintf("%s: refusal %d %s, want the documented 429 body", path, r.status, trunc(r.body))
	}
	if r.header.Get("Retry-After") != "60" || r.header.Get("X-RateLimit-Remaining") != "0" ||
		r.header.Get("X-RateLimit-Limit") != strconv.Itoa(limit) || r.header.Get("X-RateLimit-Reset") == "" {
		return fmt.Sprintf("%s: 429 headers Retry-After=%q Remaining=%q Limit=%q Reset=%q", path, r.header.Get("Retry-After"),
			r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Reset"))
	}
	return ""
}
