package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/testkit"
)

// testEmbedder is the built-in embedder that fails any call with
// "FAIL-EMBED" in a text: a fake embedding service, not a fake of our
// storage. (The worker's slow-embedding tests live in app/kb.)
type testEmbedder struct {
	*embed.Builtin
}

func newTestEmbedder(t testing.TB, dims int) *testEmbedder {
	b, err := embed.NewBuiltin(dims)
	if err != nil {
		t.Fatal(err)
	}
	return &testEmbedder{Builtin: b}
}

func (e *testEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "FAIL-EMBED") {
			return nil, fmt.Errorf("%w: test service refused the text", embed.ErrEmbedder)
		}
	}
	return e.Builtin.Embed(ctx, texts)
}

// kbOpts makes a test server with the test embedder and a wake-only worker.
func kbOpts(emb embed.Embedder) func(*serveConfig) {
	return func(c *serveConfig) {
		c.KB.TestEmbedder = emb
		c.KB.PollInterval = -1
	}
}

// kbListResp is the source list response.
type kbListResp struct {
	Data struct {
		Sources []struct {
			ID          string          `json:"id"`
			ExternalID  string          `json:"externalId"`
			Title       string          `json:"title"`
			Status      string          `json:"status"`
			ChunkCount  int             `json:"chunkCount"`
			FileSize    int             `json:"fileSize"`
			Error       *string         `json:"error"`
			ContentRole string          `json:"contentRole"`
			Metadata    json.RawMessage `json:"metadata"`
		} `json:"sources"`
		Pagination struct {
			Total   int  `json:"total"`
			Limit   int  `json:"limit"`
			Offset  int  `json:"offset"`
			HasMore bool `json:"hasMore"`
		} `json:"pagination"`
	} `json:"data"`
}

type kbSearchResp struct {
	Results []kb.Result `json:"results"`
}

// createCollection creates a collection through the API and returns its id.
func (e *testEnv) createCollection(key, name string) string {
	e.t.Helper()
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if code := e.doJSON("POST", "/api/v1/kb/collections", key, map[string]any{"name": name}, &out); code != http.StatusCreated {
		e.t.Fatalf("create collection: %d", code)
	}
	return out.Data.ID
}

// sources lists a collection's sources (first 100).
func (e *testEnv) sources(key, col string) kbListResp {
	e.t.Helper()
	var out kbListResp
	if code := e.doJSON("GET", "/api/v1/kb/sources?limit=100&collectionId="+col, key, nil, &out); code != 200 {
		e.t.Fatalf("list sources: %d", code)
	}
	return out
}

// waitProcessed polls the list until no source is pending or processing.
func (e *testEnv) waitProcessed(key, col string) kbListResp {
	e.t.Helper()
	var l kbListResp
	testkit.Eventually(e.t, 30*time.Second, func() bool {
		l = e.sources(key, col)
		for _, s := range l.Data.Sources {
			if s.Status == "pending" || s.Status == "processing" {
				return false
			}
		}
		return true
	}, "sources still processing")
	return l
}

func (e *testEnv) search(key string, body map[string]any) kbSearchResp {
	e.t.Helper()
	var out struct {
		Data kbSearchResp `json:"data"`
	}
	if code := e.doJSON("POST", "/api/v1/kb/search", key, body, &out); code != 200 {
		_, _, b := e.do("POST", "/api/v1/kb/search", key, body)
		e.t.Fatalf("search %v: %d %s", body, code, b)
	}
	return out.Data
}

func upsert(e *testEnv, key string, body map[string]any) (int, map[string]any) {
	e.t.Helper()
	var out struct {
		Data  map[string]any `json:"data"`
		Error map[string]any `json:"error"`
	}
	code := e.doJSON("POST", "/api/v1/kb/sources", key, body, &out)
	if code != 200 {
		return code, out.Error
	}
	return code, out.Data
}

func TestKBSourceLifecycle(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 64)))
	col := e.createCollection(e.key, "docs")
	src := map[string]any{"collectionId": col, "externalId": "guide", "title": "Install guide",
		"content": "# Install\n\nRun make install on Linux.\n\n## Windows\n\nUse the installer.", "metadata": map[string]any{"lang": "en"}}
	code, d := upsert(e, e.key, src)
	if code != 200 || d["status"] != "processing" || d["documentId"] == "" || d["externalId"] != "guide" {
		t.Fatalf("create: %d %v", code, d)
	}
	id := d["documentId"]
	l := e.waitProcessed(e.key, col)
	s := l.Data.Sources[0]
	if s.Status != "completed" || s.ChunkCount < 1 || s.Error != nil || s.FileSize != len(src["content"].(string)) || s.ContentRole != "knowledge" {
		t.Fatalf("after processing: %+v", s)
	}
	// Same content again: unchanged, nothing reprocessed.
	if code, d := upsert(e, e.key, src); code != 200 || d["status"] != "unchanged" || d["documentId"] != id {
		t.Fatalf("same content: %d %v", code, d)
	}
	// Title and metadata only: updated in place, still reported unchanged.
	src["title"], src["metadata"] = "Installation", map[string]any{"lang": "de"}
	if code, d := upsert(e, e.key, src); code != 200 || d["status"] != "unchanged" {
		t.Fatalf("title only: %d %v", code, d)
	}
	l = e.sources(e.key, col)
	if s := l.Data.Sources[0]; s.Title != "Installation" || s.Status != "completed" || string(s.Metadata) != `{"lang":"de"}` {
		t.Fatalf("title/metadata not updated in place: %+v", s)
	}
	// New content: reprocessed under the same id.
	src["content"] = "# Install\n\nUse brew on macOS."
	if code, d := upsert(e, e.key, src); code != 200 || d["status"] != "processing" || d["documentId"] != id {
		t.Fatalf("new content: %d %v", code, d)
	}
	e.waitProcessed(e.key, col)
	res := e.search(e.key, map[string]any{"collectionId": col, "query": "brew macOS", "mode": "keyword"})
	if len(res.Results) == 0 || !strings.Contains(res.Results[0].Content, "brew") || res.Results[0].Title != "Installation" {
		t.Fatalf("search after update: %+v", res)
	}
	if res := e.search(e.key, map[string]any{"collectionId": col, "query": "Windows", "mode": "keyword"}); len(res.Results) != 0 {
		t.Fatalf("old content still found: %+v", res)
	}
	// Filters of the list.
	var l2 kbListResp
	e.doJSON("GET", "/api/v1/kb/sources?collectionId="+col+"&status=failed", e.key, nil, &l2)
	if len(l2.Data.Sources) != 0 || l2.Data.Pagination.Total != 0 {
		t.Fatalf("status filter: %+v", l2)
	}
	e.doJSON("GET", "/api/v1/kb/sources?collectionId="+col+"&externalId=guide", e.key, nil, &l2)
	if len(l2.Data.Sources) != 1 {
		t.Fatalf("externalId filter: %+v", l2)
	}
	// Bulk delete reports unknown ids.
	var del struct {
		Data struct {
			Deleted            int      `json:"deleted"`
			DeletedExternalIDs []string `json:"deletedExternalIds"`
			NotFound           []string `json:"notFound"`
		} `json:"data"`
	}
	if code := e.doJSON("DELETE", "/api/v1/kb/sources", e.key, map[string]any{"collectionId": col, "externalIds": []string{"guide", "nope"}}, &del); code != 200 ||
		del.Data.Deleted != 1 || del.Data.DeletedExternalIDs[0] != "guide" || del.Data.NotFound[0] != "nope" {
		t.Fatalf("delete: %d %+v", code, del)
	}
	if res := e.search(e.key, map[string]any{"collectionId": col, "query": "brew macOS"}); len(res.Results) != 0 {
		t.Fatalf("deleted source still found: %+v", res)
	}
}

func TestKBContentLimit(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 64)))
	col := e.createCollection(e.key, "big")
	exact := strings.Repeat("word ", 102_400) // 512,000 bytes
	if len(exact) != 512_000 {
		t.Fatal(len(exact))
	}
	if code, d := upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "exact", "title": "t", "content": exact}); code != 200 {
		t.Fatalf("512,000 bytes refused: %d %v", code, d)
	}
	code, d := upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "over", "title": "t", "content": exact + "x"})
	if code != 400 || d["message"] != "content too long, max 500KB" || d["status"] != float64(400) {
		t.Fatalf("512,001 bytes: %d %v", code, d)
	}
	// Multi-byte: 170,667 x 3-byte runes is over the byte limit though under it in characters.
	code, _ = upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "utf8", "title": "t", "content": strings.Repeat("€", 170_667)})
	if code != 400 {
		t.Fatalf("multi-byte over the limit: %d", code)
	}
	var out map[string]any
	code = e.doJSON("POST", "/api/v1/kb/sources/batch", e.key, map[string]any{"collectionId": col, "sources": []any{
		map[string]any{"externalId": "a", "title": "t", "content": "ok"},
		map[string]any{"externalId": "b", "title": "t", "content": exact + "x"}}}, &out)
	if msg := out["error"].(map[string]any)["message"]; code != 400 || msg != "sources.1.content: content too long, max 500KB" {
		t.Fatalf("batch over the limit: %d %v", code, msg)
	}
	l := e.waitProcessed(e.key, col)
	if len(l.Data.Sources) != 1 || l.Data.Sources[0].Status != "completed" || l.Data.Sources[0].FileSize != 512_000 {
		t.Fatalf("only the exact source should exist, completed: %+v", l.Data.Sources)
	}
}

func TestKBBatch(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 64)))
	col := e.createCollection(e.key, "batch")
	var out struct {
		Data struct {
			Results []map[string]any `json:"results"`
			Summary map[string]int   `json:"summary"`
		} `json:"data"`
	}
	body := map[string]any{"collectionId": col, "sources": []any{
		map[string]any{"externalId": "a", "title": "Alpha", "content": "alpha content", "contentRole": "faq"},
		map[string]any{"externalId": "bad", "title": "Broken", "content": "this one says FAIL-EMBED"},
		map[string]any{"externalId": "c", "title": "Gamma", "content": "gamma content"},
		map[string]any{"externalId": "a", "title": "Alpha", "content": "alpha content, second version"},
		map[string]any{"externalId": "c", "title": "Gamma", "content": "gamma content"},
	}}
	if code := e.doJSON("POST", "/api/v1/kb/sources/batch", e.key, body, &out); code != 200 {
		t.Fatalf("batch: %d", code)
	}
	want := []string{"created", "created", "created", "updated", "unchanged"}
	for i, r := range out.Data.Results {
		if r["status"] != want[i] || r["documentId"] == "" {
			t.Fatalf("result %d: %v, want %s", i, r, want[i])
		}
	}
	if out.Data.Results[0]["documentId"] != out.Data.Results[3]["documentId"] {
		t.Fatal("repeated externalId made a duplicate")
	}
	if s := out.Data.Summary; s["total"] != 5 || s["created"] != 3 || s["updated"] != 1 || s["unchanged"] != 1 || s["failed"] != 0 {
		t.Fatalf("summary %v", s)
	}
	l := e.waitProcessed(e.key, col)
	got := map[string]string{}
	for _, s := range l.Data.Sources {
		got[s.ExternalID] = s.Status
		if s.ExternalID == "bad" && (s.Error == nil || !strings.Contains(*s.Error, "embedding failed")) {
			t.Fatalf("failed source without its reason: %+v", s)
		}
		if s.ExternalID == "a" && s.ContentRole != "faq" {
			t.Fatalf("contentRole lost on update: %+v", s)
		}
	}
	if len(l.Data.Sources) != 3 || got["a"] != "completed" || got["c"] != "completed" || got["bad"] != "failed" {
		t.Fatalf("statuses %v", got)
	}
	// The role filter of search.
	res := e.search(e.key, map[string]any{"collectionId": col, "query": "content", "contentRole": "faq"})
	if len(res.Results) != 1 || res.Results[0].ExternalID != "a" || !strings.Contains(res.Results[0].Content, "second version") {
		t.Fatalf("role-filtered search: %+v", res)
	}
	// Distinct external ids take the batched write: each result as one by one.
	body = map[string]any{"collectionId": col, "sources": []any{
		map[string]any{"externalId": "a", "title": "Alpha", "content": "alpha content, second version"},
		map[string]any{"externalId": "d", "title": "Delta", "content": "delta content"},
		map[string]any{"externalId": "bad", "title": "Broken", "content": "this one says FAIL-EMBED"},
		map[string]any{"externalId": "c", "title": "Gamma", "content": "gamma content, revised"},
	}}
	if code := e.doJSON("POST", "/api/v1/kb/sources/batch", e.key, body, &out); code != 200 {
		t.Fatalf("second batch: %d", code)
	}
	ids := map[string]string{}
	for _, s := range l.Data.Sources {
		ids[s.ExternalID] = s.ID
	}
	for i, want := range []struct{ ext, status string }{{"a", "unchanged"}, {"d", "created"}, {"bad", "updated"}, {"c", "updated"}} {
		r := out.Data.Results[i]
		if r["status"] != want.status || r["documentId"] == "" || (want.ext != "d" && r["documentId"] != ids[want.ext]) {
			t.Fatalf("second batch, result %d: %v, want %s of %s", i, r, want.status, ids[want.ext])
		}
	}
	l = e.waitProcessed(e.key, col)
	if len(l.Data.Sources) != 4 {
		t.Fatalf("sources after the second batch: %+v", l.Data.Sources)
	}
	if r := e.search(e.key, map[string]any{"collectionId": col, "query": "revised", "mode": "keyword"}); len(r.Results) != 1 || r.Results[0].ExternalID != "c" {
		t.Fatalf("updated content not searchable: %+v", r.Results)
	}
}

func TestKBTenantIsolation(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 64)))
	col := e.createCollection(e.key, "mine")
	upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "x", "title": "t", "content": "secret plans"})
	_, other := e.newOrg("other")
	checks := []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/v1/kb/collections/" + col, nil},
		{"DELETE", "/api/v1/kb/collections/" + col, nil},
		{"GET", "/api/v1/kb/sources?collectionId=" + col, nil},
		{"POST", "/api/v1/kb/sources", map[string]any{"collectionId": col, "externalId": "y", "title": "t", "content": "c"}},
		{"POST", "/api/v1/kb/sources/batch", map[string]any{"collectionId": col, "sources": []any{map[string]any{"externalId": "y", "title": "t", "content": "c"}}}},
		{"DELETE", "/api/v1/kb/sources", map[string]any{"collectionId": col, "externalIds": []string{"x"}}},
		{"POST", "/api/v1/kb/search", map[string]any{"collectionId": col, "query": "secret"}},
	}
	for _, c := range checks {
		var out map[string]any
		if code := e.doJSON(c.method, c.path, other, c.body, &out); code != 404 || out["error"].(map[string]any)["message"] != "collection not found" {
			t.Errorf("%s %s as another org: %d %v", c.method, c.path, code, out)
		}
	}
	var list struct {
		Data struct {
			Collections []any `json:"collections"`
		} `json:"data"`
	}
	e.doJSON("GET", "/api/v1/kb/collections", other, nil, &list)
	if len(list.Data.Collections) != 0 {
		t.Fatalf("other org sees %v", list.Data.Collections)
	}
	if l := e.sources(e.key, col); len(l.Data.Sources) != 1 || l.Data.Sources[0].ExternalID != "x" {
		t.Fatalf("owner's sources changed: %+v", l.Data.Sources)
	}
}

func TestKBCollections(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 64)))
	col := e.createCollection(e.key, "one")
	var out map[string]any
	if code := e.doJSON("POST", "/api/v1/kb/collections", e.key, map[string]any{"name": "one"}, &out); code != 409 {
		t.Fatalf("duplicate name: %d %v", code, out)
	}
	upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "x", "title": "t", "content": "hello world"})
	e.waitProcessed(e.key, col)
	var got struct {
		Data map[string]any `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v1/kb/collections/"+col, e.key, nil, &got); code != 200 || got.Data["sourceCount"] != float64(1) || got.Data["name"] != "one" {
		t.Fatalf("get: %d %v", code, got)
	}
	if code := e.doJSON("DELETE", "/api/v1/kb/collections/"+col, e.key, nil, nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if code := e.doJSON("GET", "/api/v1/kb/collections/"+col, e.key, nil, nil); code != 404 {
		t.Fatalf("deleted collection: %d", code)
	}
	if n, err := e.db.KB.KBBacklog(context.Background(), ""); err != nil || n != 0 {
		t.Fatalf("backlog after delete %d %v", n, err)
	}
}

func TestKBSearchModesAndFilters(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 256)))
	col := e.createCollection(e.key, "s")
	var out map[string]any
	e.doJSON("POST", "/api/v1/kb/sources/batch", e.key, map[string]any{"collectionId": col, "sources": []any{
		map[string]any{"externalId": "fr", "title": "Refunds", "content": "# Policy\n\n## Refunds\n\nRefunds are paid within 14 days.", "metadata": map[string]any{"lang": "en", "tier": 2, "public": true}},
		map[string]any{"externalId": "de", "title": "Erstattung", "content": "Refunds for German customers take 30 days.", "metadata": map[string]any{"lang": "de", "tier": 1, "public": false}, "contentRole": "internal"},
		map[string]any{"externalId": "ship", "title": "Shipping", "content": "Parcels ship in two days.", "metadata": map[string]any{"lang": "en"}},
	}}, &out)
	e.waitProcessed(e.key, col)
	for _, mode := range []string{"keyword", "semantic", "hybrid", ""} {
		res := e.search(e.key, map[string]any{"collectionId": col, "query": "refunds days", "mode": mode, "limit": 2})
		if len(res.Results) != 2 || res.Results[0].ExternalID == "ship" || res.Results[0].Score <= 0 {
			t.Fatalf("mode %q: %+v", mode, res.Results)
		}
	}
	r := e.search(e.key, map[string]any{"collectionId": col, "query": "refunds", "metadata": map[string]any{"lang": "en"}, "mode": "keyword"})
	if len(r.Results) != 1 || r.Results[0].ExternalID != "fr" || len(r.Results[0].HeadingPath) == 0 || r.Results[0].HeadingPath[0] != "Policy" || r.Results[0].DocumentID == "" {
		t.Fatalf("metadata string filter: %+v", r.Results)
	}
	for _, f := range []map[string]any{{"tier": 1}, {"public": false}} {
		r = e.search(e.key, map[string]any{"collectionId": col, "query": "refunds", "metadata": f, "mode": "semantic"})
		if len(r.Results) != 1 || r.Results[0].ExternalID != "de" {
			t.Fatalf("metadata %v filter: %+v", f, r.Results)
		}
	}
	// The filter narrows what the query found: "ship" is a knowledge source
	// but does not mention refunds, "de" does but is internal.
	r = e.search(e.key, map[string]any{"collectionId": col, "query": "refunds", "contentRole": "knowledge"})
	if len(r.Results) != 1 || r.Results[0].ExternalID != "fr" {
		t.Fatalf("role filter: %+v", r.Results)
	}
	// User text with FTS operators, quotes and symbols never errors.
	for _, q := range []string{`"refunds`, `refunds*`, `NEAR(refunds days`, `refunds AND OR NOT`, `title:refunds`, `^`, `🙂`, `'; DROP TABLE kb_chunks; --`} {
		e.search(e.key, map[string]any{"collectionId": col, "query": q})
	}
}
