package vectorstore_test

import (
	"context"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/vectorstore"
)

func randUnit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// exactKNN is an independent exact reference: cosine similarity of the
// query with every item, computed in float64, ties by lower id.
func exactKNN(items []vectorstore.VectorItem, q []float32, k int) []int64 {
	type scored struct {
		id int64
		s  float64
	}
	all := make([]scored, len(items))
	for i, it := range items {
		var d, n, m float64
		for j, x := range it.Vec {
			d += float64(x) * float64(q[j])
			n += float64(x) * float64(x)
			m += float64(q[j]) * float64(q[j])
		}
		all[i] = scored{it.ID, d / math.Sqrt(n*m)}
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].s != all[b].s {
			return all[a].s > all[b].s
		}
		return all[a].id < all[b].id
	})
	out := make([]int64, 0, k)
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.id)
	}
	return out
}

// The mirror, loaded from SQLite, finds what an exact scan of the stored
// vectors finds.
func TestVectorIndexRecallAgainstExact(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, dbtest.Path(t, "v.db"))
	r := rand.New(rand.NewSource(7))
	const n, dims = 3000, 96
	m := vectorstore.VectorModel{"test", "rand", dims}
	items := make([]vectorstore.VectorItem, n)
	for i := range items {
		items[i] = vectorstore.VectorItem{ID: int64(i + 1), Vec: randUnit(r, dims)}
	}
	if err := db.Vectors.PutVectors(ctx, "s", m, items); err != nil {
		t.Fatal(err)
	}
	x := search.NewVectorIndex(db.Vectors)
	var found, total int
	for range 20 {
		q := randUnit(r, dims)
		hits, err := x.Search(ctx, "s", q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]bool{}
		for _, id := range exactKNN(items, q, 10) {
			want[id] = true
		}
		for _, h := range hits {
			if want[h.ID] {
				found++
			}
		}
		total += len(want)
	}
	if rec := float64(found) / float64(total); rec < 0.98 {
		t.Fatalf("recall@10 %.3f < 0.98", rec)
	}
}

func TestVectorIndexFollowsOtherProcess(t *testing.T) {
	ctx := context.Background()
	path := dbtest.Path(t, "v.db")
	a, b := storetest.Open(t, path), storetest.Open(t, path) // two handles = two processes
	m := vectorstore.VectorModel{"test", "m", 4}
	if err := a.Vectors.PutVectors(ctx, "s", m, []vectorstore.VectorItem{{1, []float32{1, 0, 0, 0}}, {2, []float32{0, 1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	x := search.NewVectorIndex(a.Vectors)
	hits, err := x.Search(ctx, "s", []float32{0, 1, 0, 0}, 1, nil)
	if err != nil || len(hits) != 1 || hits[0].ID != 2 {
		t.Fatalf("hits %v err %v", hits, err)
	}
	// Another process replaces 2, adds 3 and deletes 1.
	if err := b.Vectors.PutVectors(ctx, "s", m, []vectorstore.VectorItem{{2, []float32{0, 0, 1, 0}}, {3, []float32{0, 1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Vectors.DeleteVectors(ctx, "s", []int64{1}); err != nil {
		t.Fatal(err)
	}
	hits, _ = x.Search(ctx, "s", []float32{0, 1, 0, 0}, 5, nil)
	if len(hits) != 2 || hits[0].ID != 3 || hits[0].Score < 0.99 {
		t.Fatalf("after other process wrote: %v", hits)
	}
	if hits, _ := x.Search(ctx, "s", []float32{0, 1, 0, 0}, 5, []int64{2, 99}); len(hits) != 1 || hits[0].ID != 2 {
		t.Fatalf("allow list: %v", hits)
	}
	// A reset to another model empties the space; new dims are searchable.
	m2 := vectorstore.VectorModel{"test", "m2", 2}
	if err := b.Vectors.ResetVectorSpace(ctx, "s", m2); err != nil {
		t.Fatal(err)
	}
	if err := b.Vectors.PutVectors(ctx, "s", m, []vectorstore.VectorItem{{5, []float32{1, 0, 0, 0}}}); err == nil {
		t.Fatal("put of another model's vectors accepted")
	}
	if err := b.Vectors.PutVectors(ctx, "s", m2, []vectorstore.VectorItem{{5, []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	hits, _ = x.Search(ctx, "s", []float32{1, 0}, 5, nil)
	if len(hits) != 1 || hits[0].ID != 5 {
		t.Fatalf("after reset: %v", hits)
	}
	if hits, _ := x.Search(ctx, "s", []float32{1, 0, 0, 0}, 5, nil); len(hits) != 0 {
		t.Fatalf("old-dims query found %v", hits)
	}
}
