package api

import (
	"strings"
	"testing"
)

// The OpenAPI document and the router list the same routes, and every
// route is documented by its feature's fragment (not only generated).
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newTestEnv(t)
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if code := e.doJSON("GET", "/api/openapi.json", "", nil, &doc); code != 200 || doc.OpenAPI != "3.1.0" {
		t.Fatalf("status %d openapi %q", code, doc.OpenAPI)
	}
	frags, err := loadFragments()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, f := range frags {
		for p, ms := range f.Paths {
			for m := range ms {
				documented[strings.ToUpper(m)+" "+p] = true
			}
		}
	}
	routes := map[string]bool{}
	for _, rt := range e.app.srv.table {
		k := rt.method + " " + openapiPath(rt.path)
		routes[k] = true
		if !documented[k] {
			t.Errorf("route %s has no entry in app/openapi/*.json", k)
		}
		op := doc.Paths[openapiPath(rt.path)][strings.ToLower(rt.method)]
		if op == nil || op["responses"] == nil || op["summary"] == "" {
			t.Errorf("route %s: incomplete operation %v", k, op)
			continue
		}
		// Redocly's operation-2xx-response, which .ci/redocly.yaml turns
		// off for the WebSocket routes' sake: a 2XX, or a 101 upgrade.
		success := false
		for code := range op["responses"].(map[string]any) {
			success = success || strings.HasPrefix(code, "2") || code == "101"
		}
		if !success {
			t.Errorf("route %s documents no success (2XX, or 101 for a WebSocket)", k)
		}
	}
	for k := range documented {
		if !routes[k] {
			t.Errorf("app/openapi documents %s, which no route serves", k)
		}
	}
}

// Every route refuses a body over its limit before anything else, even a
// GET: the 413 the document lists for each operation.
func TestBodyLimitOnEveryRoute(t *testing.T) {
	e := newTestEnv(t)
	big := strings.Repeat("x", 1<<20+1)
	for _, path := range []string{"/api/openapi.json", "/healthz"} {
		if code, _, _ := e.do("GET", path, "", big); code != 413 {
			t.Fatalf("GET %s with a 1 MiB body: %d", path, code)
		}
	}
}
