package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateKBGolden = flag.Bool("update-kb", false, "rewrite testdata/golden/kb")

// Every validation rule of the knowledge endpoints, through the real
// server: status and the exact message.
func TestKBValidationMessages(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 64)))
	col := e.createCollection(e.key, "v")
	long := func(n int) string { return strings.Repeat("a", n) }
	src := func(kv ...any) map[string]any {
		m := map[string]any{"collectionId": col, "externalId": "x", "title": "t", "content": "c"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	item := func(kv ...any) map[string]any {
		m := src(kv...)
		delete(m, "collectionId")
		return m
	}
	batch := func(items ...any) map[string]any {
		return map[string]any{"collectionId": col, "sources": append([]any{}, items...)}
	}
	many := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = item()
		}
		return out
	}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"no collection", "POST", "/api/v1/kb/sources", src("collectionId", nil), 400, "collectionId is required"},
		{"unknown collection", "POST", "/api/v1/kb/sources", src("collectionId", "nope"), 404, "collection not found"},
		{"no externalId", "POST", "/api/v1/kb/sources", src("externalId", nil), 400, "externalId is required"},
		{"externalId 256", "POST", "/api/v1/kb/sources", src("externalId", long(256)), 400, "externalId too long, max 255 characters"},
		{"externalId 255 multibyte", "POST", "/api/v1/kb/sources", src("externalId", strings.Repeat("é", 255)), 200, ""},
		{"title 501", "POST", "/api/v1/kb/sources", src("title", long(501)), 400, "title too long, max 500 characters"},
		{"blank title", "POST", "/api/v1/kb/sources", src("title", "  "), 400, "title is required"},
		{"no content", "POST", "/api/v1/kb/sources", src("content", nil), 400, "content is required"},
		{"content wrong type", "POST", "/api/v1/kb/sources", src("content", 5), 400, "content: must be a string"},
		{"metadata wrong type", "POST", "/api/v1/kb/sources", src("metadata", []int{1}), 400, "metadata: must be an object"},
		{"bad role", "POST", "/api/v1/kb/sources", src("contentRole", "FAQ!"), 400, "contentRole must be 1 to 64 characters of a-z, 0-9, _ or -"},
		{"malformed", "POST", "/api/v1/kb/sources", `{"collectionId":`, 400, "malformed JSON: unexpected end of body"},
		{"empty body", "POST", "/api/v1/kb/sources", "", 400, "request body is empty: a JSON object is required"},
		{"batch empty", "POST", "/api/v1/kb/sources/batch", batch(), 400, "sources must hold 1 to 50 items, got 0"},
		{"batch 51", "POST", "/api/v1/kb/sources/batch", batch(many(51)...), 400, "sources must hold 1 to 50 items, got 51"},
		{"batch 50", "POST", "/api/v1/kb/sources/batch", batch(many(50)...), 200, ""},
		{"batch no sources", "POST", "/api/v1/kb/sources/batch", map[string]any{"collectionId": col}, 400, "sources is required"},
		{"batch title path", "POST", "/api/v1/kb/sources/batch", batch(item(), item("title", long(501))), 400, "sources.1.title: title too long, max 500 characters"},
		{"batch type path", "POST", "/api/v1/kb/sources/batch", batch(item("externalId", 7)), 400, "sources.0.externalId: must be a string"},
		{"batch item not object", "POST", "/api/v1/kb/sources/batch", batch(item(), "x"), 400, "sources.1: must be an object"},
		{"batch null item", "POST", "/api/v1/kb/sources/batch", batch(nil), 400, "sources.0: must be an object"},
		{"batch role path", "POST", "/api/v1/kb/sources/batch", batch(item("contentRole", "")), 400, "sources.0.contentRole: contentRole must be 1 to 64 characters of a-z, 0-9, _ or -"},
		{"batch collection", "POST", "/api/v1/kb/sources/batch", batch(item()), 200, ""},
		{"list no collection", "GET", "/api/v1/kb/sources", nil, 400, "collectionId is required"},
		{"list bad status", "GET", "/api/v1/kb/sources?collectionId=" + col + "&status=done", nil, 400, "status must be one of pending, processing, completed, failed"},
		{"list limit 101", "GET", "/api/v1/kb/sources?collectionId=" + col + "&limit=101", nil, 400, "limit must be an integer between 1 and 100"},
		{"list offset -1", "GET", "/api/v1/kb/sources?collectionId=" + col + "&offset=-1", nil, 400, "offset must be a non-negative integer"},
		{"delete 101", "DELETE", "/api/v1/kb/sources", map[string]any{"collectionId": col, "externalIds": make([]string, 101)}, 400, "externalIds must hold 1 to 100 items, got 101"},
		{"delete none", "DELETE", "/api/v1/kb/sources", map[string]any{"collectionId": col}, 400, "externalIds is required"},
		{"delete empty id", "DELETE", "/api/v1/kb/sources", map[string]any{"collectionId": col, "externalIds": []string{"a", ""}}, 400, "externalIds.1: externalId is required"},
		{"search no query", "POST", "/api/v1/kb/search", map[string]any{"collectionId": col}, 400, "query is required"},
		{"search limit 51", "POST", "/api/v1/kb/search", map[string]any{"collectionId": col, "query": "q", "limit": 51}, 400, "limit must be between 1 and 50"},
		{"search limit float", "POST", "/api/v1/kb/search", map[string]any{"collectionId": col, "query": "q", "limit": 2.5}, 400, "limit: must be an integer"},
		{"search mode", "POST", "/api/v1/kb/search", map[string]any{"collectionId": col, "query": "q", "mode": "fuzzy"}, 400, "mode must be hybrid, semantic or keyword"},
		{"search metadata", "POST", "/api/v1/kb/search", map[string]any{"collectionId": col, "query": "q", "metadata": map[string]any{"a": []int{1}}}, 400, "metadata.a: filter values must be strings, numbers or booleans"},
		{"collection no name", "POST", "/api/v1/kb/collections", map[string]any{}, 400, "name is required"},
		{"collection unknown", "GET", "/api/v1/kb/collections/nope", nil, 404, "collection not found"},
		{"no key", "GET", "/api/v1/kb/collections", nil, 401, ""},
	}
	for _, c := range cases {
		key := e.key
		if c.status == 401 {
			key = ""
		}
		var out struct {
			Error struct {
				Message string `json:"message"`
				Status  int    `json:"status"`
			} `json:"error"`
		}
		code := e.doJSON(c.method, c.path, key, c.body, &out)
		if code != c.status || (c.msg != "" && out.Error.Message != c.msg) || (code >= 400 && out.Error.Status != code) {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, out.Error.Message, c.status, c.msg)
		}
	}
}

// The knowledge-source error shape, pinned per status through the server.
func TestKBErrorShapesGolden(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 64)))
	col := e.createCollection(e.key, "g")
	big := `{"collectionId":"` + col + `","externalId":"x","title":"t","content":"` + strings.Repeat("a", 2<<20) + `"}`
	cases := map[string]struct {
		method, path, key string
		body              any
	}{
		"content_400":    {"POST", "/api/v1/kb/sources", e.key, map[string]any{"collectionId": col, "externalId": "x", "title": "t", "content": strings.Repeat("a", 512_001)}},
		"batch_path_400": {"POST", "/api/v1/kb/sources/batch", e.key, map[string]any{"collectionId": col, "sources": []any{map[string]any{"externalId": "x", "title": "t"}}}},
		"collection_404": {"POST", "/api/v1/kb/sources", e.key, map[string]any{"collectionId": "missing", "externalId": "x", "title": "t", "content": "c"}},
		"too_large_413":  {"POST", "/api/v1/kb/sources", e.key, big},
		"no_key_401":     {"GET", "/api/v1/kb/sources?collectionId=" + col, "", nil},
	}
	ts := regexp.MustCompile(`"timestamp":"[^"]*"`)
	for name, c := range cases {
		_, _, b := e.do(c.method, c.path, c.key, c.body)
		b = ts.ReplaceAll(b, []byte(`"timestamp":"2026-11-22T10:04:05.123Z"`))
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %s", name, b)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(v)
		got := bytes.TrimSpace(buf.Bytes())
		path := filepath.Join("..", "..", "testdata", "golden", "kb", name+".json")
		if *updateKBGolden {
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, append(got, '\n'), 0o644)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./app -run KBErrorShapes -update-kb)", name, err)
		}
		if !bytes.Equal(bytes.TrimSpace(want), got) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
