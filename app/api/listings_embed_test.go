package api

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/embed"
)

// countingEmbedder wraps the real built-in embedder, counting the texts it
// is asked for and failing on demand.
type countingEmbedder struct {
	*embed.Builtin
	texts atomic.Int64
	fail  atomic.Bool
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.fail.Load() {
		return nil, errors.New("embedding service down")
	}
	c.texts.Add(int64(len(texts)))
	return c.Builtin.Embed(ctx, texts)
}

func newCountingEnv(t *testing.T) (*testEnv, *countingEmbedder) {
	b, err := embed.NewBuiltin(256)
	if err != nil {
		t.Fatal(err)
	}
	ce := &countingEmbedder{Builtin: b}
	return newTestEnv(t, func(c *serveConfig) { c.KB.TestEmbedder = ce }), ce
}

func TestListingsEmbedOnlyChangedText(t *testing.T) {
	e, ce := newCountingEnv(t)
	a := listing("a", "Leather sofa", "price", json.Number("10"), "attributes", map[string]any{"color": "brown"})
	b := listing("b", "Garden chair")
	e.sync(e.key, false, a, b)
	if n := ce.texts.Load(); n != 2 {
		t.Fatalf("first sync embedded %d texts", n)
	}
	if n, err := e.app.srv.listings.Vectors.Index.Len(context.Background(), listings.Space(e.orgID)); err != nil || n != 2 {
		t.Fatalf("vectors stored: %d %v", n, err)
	}
	e.sync(e.key, false, a, b) // identical
	a["price"] = json.Number("11")
	if r := e.sync(e.key, false, a, b); r.Data.Updated != 1 { // price is not part of the embedded text
		t.Fatalf("price change: %+v", r.Data)
	}
	if n := ce.texts.Load(); n != 2 {
		t.Fatalf("unchanged text re-embedded: %d texts", n)
	}
	a["attributes"] = map[string]any{"color": "black"}
	e.sync(e.key, false, a, b)
	if n := ce.texts.Load(); n != 3 {
		t.Fatalf("changed text: %d texts", n)
	}
	// The vector side finds what the keyword index cannot: "sofas" only
	// matches "sofa" through the embedder's stemming.
	var sr searchResp
	e.doJSON("GET", "/api/v1/listings/search?q=sofas", e.key, nil, &sr)
	if len(sr.Data.Results) == 0 || sr.Data.Results[0].ExternalID != "a" || *sr.Data.Results[0].Score <= 0 {
		t.Fatalf("semantic hit: %+v", sr.Data.Results)
	}
	// deleteStale removes the vector too.
	e.sync(e.key, true, listing("b", "Garden chair"))
	if n, _ := e.app.srv.listings.Vectors.Index.Len(context.Background(), listings.Space(e.orgID)); n != 1 {
		t.Fatalf("vectors after delete: %d", n)
	}
}

func TestListingsEmbedderFailure(t *testing.T) {
	e, ce := newCountingEnv(t)
	e.sync(e.key, false, listing("keep", "Kept"))
	ce.fail.Store(true)
	r := e.sync(e.key, false, listing("keep", "Kept"), listing("new", "Needs a vector"))
	if r.Data.Failed != 1 || r.Data.Unchanged != 1 || r.Data.Results.Failed[0].ExternalID != "new" ||
		r.Data.Results.Failed[0].Error != "embedding failed" {
		t.Fatalf("embedder down: %+v", r.Data)
	}
	if s := e.summaries(e.key, ""); s.Data.Total != 1 {
		t.Fatalf("a failed listing was written: %+v", s.Data)
	}
	var out errResp
	if code := e.doJSON("GET", "/api/v1/listings/search?q=kept", e.key, nil, &out); code != 503 {
		t.Fatalf("search with the embedder down: %d", code)
	}
	ce.fail.Store(false)
	if r := e.sync(e.key, false, listing("new", "Needs a vector")); r.Data.Imported != 1 {
		t.Fatalf("retry: %+v", r.Data)
	}
}
