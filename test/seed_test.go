package test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
)

// seeded are the ids of one organization's objects, keyed by the path
// prefix whose {param} they fill.
type seeded map[string]string

// idFor returns the id to put into a documented path template.
func (sd seeded) idFor(path string) string {
	for _, p := range []string{"/api/v1/agents/", "/api/v2/jobs/", "/api/v1/kb/collections/", "/api/v1/calls/", "/api/v2/api-keys/"} {
		if strings.HasPrefix(path, p) {
			return sd[p]
		}
	}
	return "00000000-0000-4000-8000-000000000000"
}

func dataID(t testing.TB, r resp) string {
	t.Helper()
	m := r.json()
	d, _ := m["data"].(map[string]any)
	if id, ok := d["id"].(string); ok {
		return id
	}
	if id, ok := d["documentId"].(string); ok {
		return id
	}
	t.Fatalf("no data.id in %d %s", r.status, trunc(r.body))
	return ""
}

// seed creates, through the API with key, one object of every kind and
// waits until background work on them has settled.
func seed(t testing.TB, s *server, key string) map[string]string {
	t.Helper()
	sd := seeded{}
	r := s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Ava", "type": "voice", "status": "active",
		"model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}})
	if r.status != 201 {
		t.Fatalf("create agent: %d %s", r.status, r.body)
	}
	sd["/api/v1/agents/"] = dataID(t, r)
	r = s.must("POST", "/api/v2/jobs", key, map[string]any{"name": "Follow-ups", "agentId": sd["/api/v1/agents/"],
		"status": "active", "triggerType": "manual", "trustLevel": "supervised"})
	if r.status != 201 {
		t.Fatalf("create job: %d %s", r.status, r.body)
	}
	sd["/api/v2/jobs/"] = dataID(t, r)
	r = s.must("POST", "/api/v1/kb/collections", key, map[string]any{"name": "Docs"})
	if r.status != 201 {
		t.Fatalf("create collection: %d %s", r.status, r.body)
	}
	coll := dataID(t, r)
	sd["/api/v1/kb/collections/"] = coll
	sd["collection"] = coll
	r = s.must("POST", "/api/v1/kb/sources", key, map[string]any{"collectionId": coll, "externalId": "faq", "title": "FAQ",
		"content": "# Returns\n\nYou can return any item within 30 days.\n\n## Shipping\n\nWe ship worldwide."})
	if r.status != 200 {
		t.Fatalf("create source: %d %s", r.status, r.body)
	}
	r = s.must("POST", "/api/v1/listings/sync", key, map[string]any{"listings": []any{
		map[string]any{"externalId": "sku-1", "title": "Red chair", "price": 49.5, "category": "chairs", "attributes": map[string]any{"color": "red"}}}})
	if r.status != 200 {
		t.Fatalf("sync listings: %d %s", r.status, r.body)
	}
	r = s.must("POST", "/api/v1/calls/schedule", key, map[string]any{"agentId": sd["/api/v1/agents/"], "contactPhone": "+14155550123",
		"scheduledAt": time.Now().Add(240 * time.Hour).UTC().Format(time.RFC3339)})
	if r.status != 201 && r.status != 200 {
		t.Fatalf("schedule call: %d %s", r.status, r.body)
	}
	sd["/api/v1/calls/"] = dataID(t, r)
	r = s.must("POST", "/api/v2/api-keys", key, map[string]any{"name": "seed"})
	if r.status != 201 {
		t.Fatalf("create key: %d %s", r.status, r.body)
	}
	sd["/api/v2/api-keys/"] = dataID(t, r)
	// Wait for the knowledge worker to finish the source.
	testkit.Within(30*time.Second, func() bool {
		r = s.must("GET", "/api/v1/kb/sources?collectionId="+coll, key, nil)
		return strings.Contains(string(r.body), `"status":"completed"`)
	})
	out := map[string]string{}
	for _, rt := range routesFromOpenAPI(t, s) {
		out[rt.path] = sd.idFor(rt.path)
	}
	out["collection"] = coll
	out["agent"] = sd["/api/v1/agents/"]
	return out
}
