package test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
)

// TestIsolation: a key of organization B gets 404 for every route that
// names organization A's objects and changes nothing; expired, revoked and
// removed-user keys get 401 on every authenticated route; keys never
// appear in the log.
func TestIsolation(t *testing.T) {
	s := start(t, t.TempDir())
	ids := seed(t, s, s.Key)
	keyB := s.newOrg("orgb")
	routes := routesFromOpenAPI(t, s)
	coll := ids["collection"]

	before := snapshot(t, s.db)
	checked := 0
	for _, rt := range routes {
		if rt.public {
			continue
		}
		var path string
		var body any
		switch {
		case strings.HasSuffix(rt.path, "/talk"):
			// A WebSocket route refuses a plain GET (400) before it looks
			// at the agent: B asks for A's agent as a browser would.
			req, _ := http.NewRequest("GET", s.URL+fillPath(rt.path, ids["agent"]), nil)
			req.Header.Set("x-api-key", keyB)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Sec-WebSocket-Version", "13")
			req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			r, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			checked++
			if r.StatusCode != 404 {
				t.Errorf("org B's voice session with org A's agent: %d (want 404)", r.StatusCode)
			}
			continue
		case strings.Contains(rt.path, "{"):
			path = fillPath(rt.path, ids[rt.path])
			if rt.method == "PATCH" || rt.method == "POST" {
				body = map[string]any{"name": "hijacked", "status": "inactive", "summary": "x"}
			}
		case rt.path == "/api/v1/kb/sources/upload":
			// A multipart file, not this JSON: app/api's TestKBUploadAndWebSources
			// sends B's key a real file for A's collection (404).
			continue
		case strings.HasPrefix(rt.path, "/api/v1/kb/") && rt.path != "/api/v1/kb/collections":
			// Collection-scoped: A's collection id with B's key.
			if rt.method == "GET" {
				path = rt.path + "?collectionId=" + coll
			} else {
				path = rt.path
				body = map[string]any{"collectionId": coll, "externalIds": []string{"faq"}, "externalId": "faq", "title": "x",
					"content": "x", "query": "returns", "sources": []any{map[string]any{"externalId": "faq", "title": "x", "content": "y"}}}
			}
		case rt.method == "POST" && strings.HasPrefix(rt.path, "/api/v1/calls/"):
			path = rt.path
			body = map[string]any{"agentId": ids["agent"], "contactPhone": "+14155550199", "phoneNumber": "+14155550199",
				"calls": []any{map[string]any{"contactPhone": "+14155550199"}}}
		default:
			continue
		}
		r := s.must(rt.method, path, keyB, body)
		checked++
		if r.status != 404 {
			t.Errorf("org B %s %s: %d %s (want 404)", rt.method, path, r.status, trunc(r.body))
		}
	}
	if after := snapshot(t, s.db); after != before {
		t.Errorf("org B's requests changed org A's data:\nbefore %s\nafter  %s", before, after)
	}
	t.Logf("%d cross-organization requests refused", checked)

	// Lists of B never show A's objects.
	for _, p := range []string{"/api/v1/agents", "/api/v2/agents", "/api/v1/calls", "/api/v1/kb/collections", "/api/v1/listings/sync", "/api/v2/api-keys", "/api/v2/jobs"} {
		r := s.must("GET", p, keyB, nil)
		for _, id := range ids {
			if id != "" && strings.Contains(string(r.body), id) {
				t.Errorf("GET %s with org B's key shows org A's %s", p, id)
			}
		}
	}

	// A's phone number cannot be claimed by B (issue 27): 409, nothing stored.
	if r := s.must("POST", "/api/v1/agents", keyB, map[string]any{"name": "thief", "type": "voice",
		"phoneNumbers": []string{"+14155550100"}}); r.status != 409 {
		t.Errorf("org B claims org A's phone number: %d %s", r.status, r.body)
	}
	if r := s.must("GET", "/api/v1/agents", keyB, nil); strings.Contains(string(r.body), "thief") {
		t.Error("the refused claim stored an agent")
	}

	// Dead keys: revoked, removed user, unknown (expiry is covered in app).
	var k struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	json.Unmarshal([]byte(s.cli("key", "create", "--org", "default", "--json")), &k)
	s.cli("key", "revoke", k.ID)
	revoked := k.Key
	s.cli("user", "add", "gone@example.test", "--org", "default", "--role", "admin")
	json.Unmarshal([]byte(s.cli("key", "create", "--org", "default", "--user", "gone@example.test", "--json")), &k)
	removed := k.Key
	if r := s.must("GET", "/api/v1/agents", removed, nil); r.status != 200 {
		t.Fatalf("fresh key refused: %d", r.status)
	}
	s.cli("user", "remove", "gone@example.test", "--org", "default")
	// The CLI is another process: on PostgreSQL this server hears of the
	// change by NOTIFY, within milliseconds (more on a loaded machine; CI
	// once sent the first request before it arrived).
	for _, key := range []string{revoked, removed} {
		testkit.Within(2*time.Second, func() bool { return s.must("GET", "/api/v1/agents", key, nil).status == 401 })
	}
	for _, rt := range routes {
		if rt.public {
			continue
		}
		for name, key := range map[string]string{"revoked": revoked, "removed user": removed, "garbage": "agd_" + strings.Repeat("Z", 40)} {
			r := s.must(rt.method, fillPath(rt.path, ids[rt.path]), key, nil)
			if r.status != 401 {
				t.Errorf("%s key on %s %s: %d", name, rt.method, rt.path, r.status)
			}
		}
	}
	for _, key := range []string{s.Key, keyB, revoked, removed} {
		if strings.Contains(s.Logs.String(), key) {
			t.Fatal("an API key appears in the server log")
		}
	}
}
