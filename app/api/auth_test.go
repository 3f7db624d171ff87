package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
)

func TestBootstrapKeyWorks(t *testing.T) {
	e := newTestEnv(t)
	if !access.WellFormedKey(e.key) {
		t.Fatalf("bootstrap key %q is not agd_ + 40 base62", e.key)
	}
	var out struct {
		Data struct {
			Keys  []map[string]any `json:"keys"`
			Count int              `json:"count"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v2/api-keys", e.key, nil, &out); code != 200 {
		t.Fatalf("status %d", code)
	}
	if out.Data.Count != 1 || out.Data.Keys[0]["prefix"] != e.key[:10] || out.Data.Keys[0]["createdBy"] != "owner@localhost" {
		t.Fatalf("keys: %+v", out.Data)
	}
	if strings.Contains(e.logs.String(), e.key) {
		t.Fatal("the key appears in the log")
	}
	// A second start on the same file prints no key.
	e2 := startTestEnv(t, e.db.Path())
	if e2.key != "" {
		t.Fatal("second start printed a key")
	}
}

func TestAuthRefusals(t *testing.T) {
	e := newTestEnv(t)
	viewer := e.keyWithRole(e.orgID, "viewer", access.KeyOptions{})
	past := -1
	_ = past
	cases := []struct {
		name   string
		header map[string]string
		path   string
		status int
		msg    string
	}{
		{"no key", nil, "/api/v2/api-keys", 401, "missing API key"},
		{"garbage key", map[string]string{"x-api-key": "nope"}, "/api/v2/api-keys", 401, "invalid or expired"},
		{"unknown well-formed key", map[string]string{"x-api-key": "agd_" + strings.Repeat("a", 40)}, "/api/v2/api-keys", 401, "invalid or expired"},
		{"bearer works", map[string]string{"Authorization": "Bearer " + e.key}, "/api/v2/api-keys", 200, ""},
		{"bearer scheme case-insensitive", map[string]string{"Authorization": "bearer " + e.key}, "/api/v2/api-keys", 200, ""},
		{"basic scheme refused", map[string]string{"Authorization": "Basic " + e.key}, "/api/v2/api-keys", 401, "missing API key"},
		{"x-api-key wins over bearer", map[string]string{"x-api-key": "agd_" + strings.Repeat("b", 40), "Authorization": "Bearer " + e.key}, "/api/v2/api-keys", 401, "invalid"},
		{"x-api-key wins (valid)", map[string]string{"x-api-key": e.key, "Authorization": "Bearer junk"}, "/api/v2/api-keys", 200, ""},
		{"key in URL refused", map[string]string{"x-api-key": e.key}, "/api/v2/api-keys?api_key=" + e.key, 401, "not accepted in the URL"},
		{"token in URL refused", nil, "/api/v2/api-keys?token=x", 401, "not accepted in the URL"},
		{"viewer lacks apikey:manage", map[string]string{"x-api-key": viewer}, "/api/v2/api-keys", 403, "insufficient permissions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.url+c.path, nil)
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct {
					Message string `json:"message"`
					Status  int    `json:"status"`
				} `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, c.status, body.Error.Message)
			}
			if c.msg != "" && (!strings.Contains(body.Error.Message, c.msg) || body.Error.Status != c.status) {
				t.Fatalf("error %+v, want message containing %q", body.Error, c.msg)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatal("actual responses must not carry CORS headers")
			}
		})
	}
}

// A second storage.Stores on the same file stands for another process (the
// CLI): its changes must take effect on the server's next request.
func TestKeyStopsAtOnceAcrossProcesses(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	other := storetest.Open(t, e.db.Path())

	u, err := other.Orgs.AddUser(ctx, e.orgID, "leaver@example.test", "admin")
	if err != nil {
		t.Fatal(err)
	}
	key, k, err := features.NewAccess(other).CreateKey(ctx, e.orgID, u.ID, access.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // warm the cache
		if code, _, b := e.do("GET", "/api/v2/api-keys", key, nil); code != 200 {
			t.Fatalf("before removal: %d %s", code, b)
		}
	}
	if err := other.Orgs.RemoveUser(ctx, e.orgID, u.Email); err != nil {
		t.Fatal(err)
	}
	refusedAtOnce(t, e, key, 401, "removed user's key")

	// Revocation from the other process, immediately after a request.
	key2, k2, err := features.NewAccess(other).CreateKey(ctx, e.orgID, mustOwner(t, other, e.orgID), access.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = k
	if code, _, _ := e.do("GET", "/api/v2/api-keys", key2, nil); code != 200 {
		t.Fatal("new key refused")
	}
	if err := other.Orgs.RevokeKey(ctx, "", k2.ID); err != nil {
		t.Fatal(err)
	}
	refusedAtOnce(t, e, key2, 401, "revoked key")

	// A role change applies at once too: an admin demoted to viewer loses apikey:manage.
	admin, err := other.Orgs.AddUser(ctx, e.orgID, "demoted@example.test", "admin")
	if err != nil {
		t.Fatal(err)
	}
	key3, _, err := features.NewAccess(other).CreateKey(ctx, e.orgID, admin.ID, access.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := e.do("GET", "/api/v2/api-keys", key3, nil); code != 200 {
		t.Fatal("admin refused")
	}
	if _, err := other.Orgs.SetUserRole(ctx, e.orgID, admin.ID, "viewer"); err != nil {
		t.Fatal(err)
	}
	refusedAtOnce(t, e, key3, 403, "demoted admin's key")
}

// refusedAtOnce checks that key is now refused with code: on the next
// request on SQLite (the wal-index header shows the other handle's commit);
// on PostgreSQL the server's auth cache hears of it by NOTIFY, so within a
// second (milliseconds in practice).
func refusedAtOnce(t *testing.T, e *testEnv, key string, code int, what string) {
	t.Helper()
	start, got := time.Now(), 0
	testkit.Eventually(t, settleTime(), func() bool {
		got, _, _ = e.do("GET", "/api/v2/api-keys", key, nil)
		return got == code
	}, "%s: status %d, want %d", what, &got, code)
	t.Logf("%s: refused after %s", what, time.Since(start).Round(time.Microsecond))
}

// settleTime is how long a change made elsewhere may take to reach this
// server: at once on SQLite (one process), a NOTIFY later on PostgreSQL.
func settleTime() time.Duration {
	if dbtest.Postgres() {
		return time.Second
	}
	return 0
}

func mustOwner(t *testing.T, db *storage.Stores, orgID string) string {
	u, err := db.Orgs.FirstOwner(context.Background(), orgID)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func TestKeyLifecycleOverAPI(t *testing.T) {
	e := newTestEnv(t)
	var created struct {
		Data map[string]any `json:"data"`
	}
	if code := e.doJSON("POST", "/api/v2/api-keys", e.key, map[string]any{"name": "ci", "expiresInDays": 7, "rateLimitPerMinute": 60}, &created); code != 201 {
		t.Fatalf("create: %d %v", code, created)
	}
	key, _ := created.Data["key"].(string)
	if !access.WellFormedKey(key) || created.Data["rateLimitPerMinute"].(float64) != 60 {
		t.Fatalf("created %+v", created.Data)
	}
	exp, _ := time.Parse(time.RFC3339, created.Data["expiresAt"].(string))
	if d := time.Until(exp); d < 6*24*time.Hour || d > 7*24*time.Hour {
		t.Fatalf("expiresAt %v", exp)
	}
	code, h, _ := e.do("GET", "/api/v2/api-keys", key, nil)
	if code != 200 || h.Get("X-RateLimit-Limit") != "60" || h.Get("X-RateLimit-Remaining") != "59" {
		t.Fatalf("new key: %d limit %q remaining %q", code, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"))
	}
	if code := e.doJSON("POST", "/api/v2/api-keys", e.key, map[string]any{"expiresInDays": nil}, &created); code != 201 || created.Data["expiresAt"] != nil {
		t.Fatalf("never-expiring key: %d %+v", code, created.Data)
	}
	for _, bad := range []any{
		map[string]any{"expiresInDays": 0}, map[string]any{"expiresInDays": "soon"},
		map[string]any{"rateLimitPerMinute": -1}, map[string]any{"name": strings.Repeat("n", 101)}, "[]", "{",
	} {
		if code, _, b := e.do("POST", "/api/v2/api-keys", e.key, bad); code != 400 {
			t.Fatalf("%v: status %d %s", bad, code, b)
		}
	}
	// Revoke the first created key; another organization cannot.
	id := created.Data["id"].(string)
	_, otherKey := e.newOrg("other")
	if code, _, _ := e.do("DELETE", "/api/v2/api-keys/"+id, otherKey, nil); code != 404 {
		t.Fatalf("cross-org revoke: %d", code)
	}
	if code, _, _ := e.do("DELETE", "/api/v2/api-keys/"+id, e.key, nil); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	// An expired key is refused.
	u, _ := e.db.Orgs.FirstOwner(context.Background(), e.orgID)
	hash := []byte{}
	_ = hash
	nk, secret, _ := access.KeyOptions{}.NewKey(e.orgID, u.ID)
	past := time.Now().Add(-time.Second)
	nk.ExpiresAt = &past
	if _, err := e.db.Orgs.CreateKey(context.Background(), nk); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := e.do("GET", "/api/v2/api-keys", secret, nil); code != 401 {
		t.Fatalf("expired key: %d", code)
	}
}

func TestPreflightAndRequestID(t *testing.T) {
	e := newTestEnv(t)
	code, h, _ := e.do("OPTIONS", "/api/v1/calls/outbound", "", nil)
	if code != 204 || h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "X-Api-Key") {
		t.Fatalf("preflight %d %v", code, h)
	}
	code, h, _ = e.do("GET", "/healthz", "", nil)
	if code != 200 || len(h.Get("X-Request-Id")) < 16 {
		t.Fatalf("healthz %d id %q", code, h.Get("X-Request-Id"))
	}
	code, _, b := e.do("GET", "/api/v2/nothing-here", "", nil)
	if code != 404 || !strings.Contains(string(b), `"status":404`) {
		t.Fatalf("unknown route %d %s", code, b)
	}
	code, _, _ = e.do("PUT", "/api/v2/api-keys", e.key, nil)
	if code != 405 {
		t.Fatalf("wrong method: %d", code)
	}
}

// The key list is served from a cache; every change, from this process or
// another, shows on the next read.
func TestKeyListFollowsChanges(t *testing.T) {
	e := newTestEnv(t)
	other := storetest.Open(t, e.db.Path())
	count := func() int {
		var out struct {
			Data struct {
				Count int `json:"count"`
			} `json:"data"`
		}
		e.doJSON("GET", "/api/v2/api-keys", e.key, nil, &out)
		return out.Data.Count
	}
	if n := count(); n != 1 {
		t.Fatalf("start: %d keys", n)
	}
	u, _ := other.Orgs.FirstOwner(context.Background(), e.orgID)
	_, k, err := features.NewAccess(other).CreateKey(context.Background(), e.orgID, u.ID, access.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// On PostgreSQL the list cache hears of changes elsewhere by NOTIFY,
	// a moment after they commit.
	testkit.Eventually(t, settleTime(), func() bool { return count() == 2 }, "a key made elsewhere not listed")
	other.Orgs.RevokeKey(context.Background(), "", k.ID)
	testkit.Eventually(t, settleTime(), func() bool {
		var out struct {
			Data struct {
				Keys []map[string]any `json:"keys"`
			} `json:"data"`
		}
		e.doJSON("GET", "/api/v2/api-keys", e.key, nil, &out)
		revoked := 0
		for _, k := range out.Data.Keys {
			if k["status"] == "revoked" {
				revoked++
			}
		}
		return revoked == 1
	}, "revocation elsewhere not shown")
}

// Health answers 503 in the v2 error shape when the database is gone.
func TestHealthDatabaseDown(t *testing.T) {
	e := newTestEnv(t)
	e.db.Close()
	code, _, b := e.do("GET", "/healthz", "", nil)
	if code != 503 || !strings.Contains(string(b), "database unavailable") {
		t.Fatalf("healthz with a closed database: %d %s", code, b)
	}
}
