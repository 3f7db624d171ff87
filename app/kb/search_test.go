package kb

import (
	"context"
	"testing"
)

// A collection's searchAlpha weighs its hybrid searches when the request
// gives none (the collection check of search reads it).
func TestCollectionSearchAlpha(t *testing.T) {
	ctx := context.Background()
	k := newKB(t, testCfg(newTestEmbedder(t, 64)))
	zero := 0.0
	c, err := k.svc.Create(ctx, k.org, CollectionInput{Name: "docs", SearchAlpha: &zero})
	if err != nil {
		t.Fatal(err)
	}
	k.upsert(c.ID, "a", "Wings", "swept wings at transonic speed and wing flutter")
	k.upsert(c.ID, "b", "Heat", "heat transfer in hypersonic flow over wings")
	k.upsert(c.ID, "c", "Flutter", "panel flutter of thin plates")
	k.waitProcessed(c.ID)
	scores := func(alpha *float64) []float64 {
		q, limit := "wing flutter", 3
		res, err := k.svc.Search(ctx, k.org, SearchInput{CollectionID: c.ID, Query: &q, Limit: &limit, Alpha: alpha})
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, r := range res {
			out = append(out, r.Score)
		}
		return out
	}
	one := 1.0
	got, keyword, semantic := scores(nil), scores(&zero), scores(&one)
	if len(got) < 2 || !equalFloats(got, keyword) || equalFloats(got, semantic) {
		t.Fatalf("collection alpha 0: %v, request alpha 0: %v, request alpha 1: %v", got, keyword, semantic)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
