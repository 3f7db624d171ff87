package kbstore_test

import (
	"context"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/vectorstore"
)

// The text mirror follows chunk writes of another process (through the
// vector log), drops deleted chunks and ranks by BM25.
func TestTextIndexFollowsWrites(t *testing.T) {
	ctx := context.Background()
	path := dbtest.Path(t, "t.db")
	a, b := storetest.Open(t, path), storetest.Open(t, path)
	org, err := a.Orgs.CreateOrg(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	col, err := a.KB.CreateCollection(ctx, org.ID, "c", "")
	if err != nil {
		t.Fatal(err)
	}
	m := vectorstore.VectorModel{Embedder: "test", Model: "m", Dims: 2}
	put := func(db *storage.Stores, ext string, texts ...string) {
		t.Helper()
		if _, err := db.KB.UpsertSource(ctx, org.ID, col.ID, kbstore.SourceInput{ExternalID: ext, Title: ext, Content: texts[0]}); err != nil {
			t.Fatal(err)
		}
		j, err := claimOne(db, "w", 1e12)
		if err != nil {
			t.Fatal(err)
		}
		var cs []kbstore.KBChunk
		for i, tx := range texts {
			cs = append(cs, kbstore.KBChunk{Index: i, Content: tx, Body: tx, Vec: []float32{1, 0}})
		}
		if err := completeOne(db, j, "w", m, cs); err != nil {
			t.Fatal(err)
		}
	}
	put(a, "wings", "swept wings at transonic speeds", "wing flutter")
	x := search.NewTextIndex(a.Vectors, a.KB.LoadText)
	space := kbstore.KBSpace(col.ID)
	hits, err := x.Search(ctx, space, "Wing", 5, nil)
	if err != nil || len(hits) != 2 {
		t.Fatalf("hits %v err %v", hits, err)
	}
	put(b, "heat", "heat transfer in hypersonic flow")
	if hits, _ := x.Search(ctx, space, "hypersonic heating", 5, nil); len(hits) != 1 {
		t.Fatalf("write of another process not seen: %v", hits)
	}
	if _, _, err := b.KB.DeleteSources(ctx, col.ID, []string{"wings"}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := x.Search(ctx, space, "wings", 5, nil); len(hits) != 0 {
		t.Fatalf("deleted chunks still found: %v", hits)
	}
	// Operators and quotes are just punctuation.
	for _, q := range []string{`"unterminated`, `NEAR(a b`, `*`, `heat OR`, `col:heat`, `^heat`, `-`, `🙂`} {
		if _, err := x.Search(ctx, space, q, 5, nil); err != nil {
			t.Errorf("text index %q: %v", q, err)
		}
	}
	if hits, _ := x.Search(ctx, space, `"heat" NEAR(`, 5, nil); len(hits) != 1 {
		t.Fatalf("quoted word: %v", hits)
	}
}
