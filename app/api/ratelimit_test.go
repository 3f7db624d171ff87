package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
)

// newBareServer is a Server on a fresh database with one extra v1 test
// route, served through httptest, for middleware tests.
func newBareServer(t testing.TB) (*Server, *httptest.Server, *storage.Stores) {
	t.Helper()
	db := storetest.Open(t, dbtest.Path(t, "a.db"))
	s := New(Config{Version: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Access: features.NewAccess(db),
		Stores: Stores{Epoch: db, Orgs: db.Orgs, Calls: db.Calls, Agents: db.Agents}})
	s.handle(route{method: "GET", path: "/api/v1/test/ping", family: FamilyCalls, summary: "test"},
		func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
			httpx.WriteJSON(w, 200, map[string]any{"ok": true})
			return nil
		})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts, db
}

func newOrgKey(t testing.TB, db *storage.Stores, name string, o access.KeyOptions) (orgID, ownerKey, limitedKey string) {
	t.Helper()
	org, key, _, err := features.NewAccess(db).CreateOrg(context.Background(), name, "owner@"+name+".test")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := db.Orgs.FirstOwner(context.Background(), org.ID)
	lk, _, err := features.NewAccess(db).CreateKey(context.Background(), org.ID, u.ID, o)
	if err != nil {
		t.Fatal(err)
	}
	return org.ID, key, lk
}

// 1,200 requests from 16 goroutines through one key limited to 1,000 per
// minute: exactly 1,000 admitted, 200 refused with the documented body.
func TestRateLimitExactUnderConcurrency(t *testing.T) {
	for _, tc := range []struct {
		path    string
		refused int
	}{{"/api/v1/test/ping", 429}, {"/api/v2/api-keys", 401}} {
		t.Run(tc.path, func(t *testing.T) {
			_, ts, db := newBareServer(t)
			_, _, key := newOrgKey(t, db, "rl", access.KeyOptions{RateLimit: 1000})
			var ok, refused, other atomic.Int64
			var mu sync.Mutex
			var sample []byte
			var sampleHeader http.Header
			jobs := make(chan int)
			var wg sync.WaitGroup
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range jobs {
						req, _ := http.NewRequest("GET", ts.URL+tc.path, nil)
						req.Header.Set("x-api-key", key)
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						switch resp.StatusCode {
						case 200:
							ok.Add(1)
						case tc.refused:
							refused.Add(1)
							mu.Lock()
							sample, sampleHeader = b, resp.Header
							mu.Unlock()
						default:
							other.Add(1)
						}
					}
				}()
			}
			for i := 0; i < 1200; i++ {
				jobs <- i
			}
			close(jobs)
			wg.Wait()
			if ok.Load() != 1000 || refused.Load() != 200 || other.Load() != 0 {
				t.Fatalf("admitted %d, refused %d, other %d; want 1000/200/0", ok.Load(), refused.Load(), other.Load())
			}
			if sampleHeader.Get("Retry-After") != "60" || sampleHeader.Get("X-RateLimit-Remaining") != "0" || sampleHeader.Get("X-RateLimit-Limit") != "1000" {
				t.Fatalf("refusal headers %v", sampleHeader)
			}
			var body struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(sample, &body); err != nil {
				t.Fatal(err)
			}
			if tc.refused == 429 {
				if body.Error["code"] != "RATE_LIMITED" || body.Error["status"] != float64(429) || body.Error["retryInSeconds"] != float64(60) || body.Error["timestamp"] == nil {
					t.Fatalf("429 body %s", sample)
				}
			} else if body.Error["status"] != float64(401) {
				t.Fatalf("/v2 quirk body %s", sample)
			}
		})
	}
}

// A documented /v1 route answers the rate limit's own 429 shape, which the
// schema check holds against the OpenAPI document.
func TestRateLimitOnDocumentedV1Route(t *testing.T) {
	e := newTestEnv(t)
	key := e.keyWithRole(e.orgID, "member", access.KeyOptions{RateLimit: 1})
	if code, _, _ := e.do("GET", "/api/v1/agents", key, nil); code != 200 {
		t.Fatalf("first request: %d", code)
	}
	if code, h, _ := e.do("GET", "/api/v1/agents", key, nil); code != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("second request: %d", code)
	}
}
