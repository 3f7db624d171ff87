package storage

import (
	"context"
	"math"
	"math/rand"
	"path/filepath"
	"testing"
)

func openTestDB(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

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

// sqlKNN is an independent exact reference: sqlite-vec's cosine distance
// over the stored blobs.
func sqlKNN(t testing.TB, db *DB, space string, q []float32, k int) []int64 {
	rows, err := db.r.Query("SELECT item_id FROM vectors WHERE space = ? ORDER BY vec_distance_cosine(vec, ?), item_id LIMIT ?", space, encodeVector(q), k)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		out = append(out, id)
	}
	return out
}

func TestVectorIndexRecallAgainstSQLiteVec(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, filepath.Join(t.TempDir(), "v.db"))
	r := rand.New(rand.NewSource(7))
	const n, dims = 3000, 96
	m := VectorModel{"test", "rand", dims}
	items := make([]VectorItem, n)
	for i := range items {
		items[i] = VectorItem{ID: int64(i + 1), Vec: randUnit(r, dims)}
	}
	if err := db.PutVectors(ctx, "s", m, items); err != nil {
		t.Fatal(err)
	}
	x := NewVectorIndex(db)
	var found, total int
	for range 20 {
		q := randUnit(r, dims)
		hits, err := x.Search(ctx, "s", q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]bool{}
		for _, id := range sqlKNN(t, db, "s", q, 10) {
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
	path := filepath.Join(t.TempDir(), "v.db")
	a, b := openTestDB(t, path), openTestDB(t, path) // two handles = two processes
	m := VectorModel{"test", "m", 4}
	if err := a.PutVectors(ctx, "s", m, []VectorItem{{1, []float32{1, 0, 0, 0}}, {2, []float32{0, 1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	x := NewVectorIndex(a)
	hits, err := x.Search(ctx, "s", []float32{0, 1, 0, 0}, 1, nil)
	if err != nil || len(hits) != 1 || hits[0].ID != 2 {
		t.Fatalf("hits %v err %v", hits, err)
	}
	// Another process replaces 2, adds 3 and deletes 1.
	if err := b.PutVectors(ctx, "s", m, []VectorItem{{2, []float32{0, 0, 1, 0}}, {3, []float32{0, 1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteVectors(ctx, "s", []int64{1}); err != nil {
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
	m2 := VectorModel{"test", "m2", 2}
	if err := b.ResetVectorSpace(ctx, "s", m2); err != nil {
		t.Fatal(err)
	}
	if err := b.PutVectors(ctx, "s", m, []VectorItem{{5, []float32{1, 0, 0, 0}}}); err == nil {
		t.Fatal("put of another model's vectors accepted")
	}
	if err := b.PutVectors(ctx, "s", m2, []VectorItem{{5, []float32{1, 0}}}); err != nil {
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

func TestQuantizedSearchMatchesExact(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	const dims = 100 // not a multiple of 32: padding path
	sp := &vspace{dims: dims, pos: map[int64]int{}}
	for i := range 5000 {
		sp.put(int64(i), randUnit(r, dims))
	}
	sp.requantize()
	for i := range 200 { // edits after the build keep the int8 copy in step
		sp.remove(int64(i * 7))
		sp.put(int64(10000+i), randUnit(r, dims))
	}
	var found, total int
	for range 30 {
		q := randUnit(r, dims)
		want := map[int64]bool{}
		for _, h := range sp.searchIDs(q, 10, sp.ids) {
			want[h.ID] = true
		}
		got := sp.searchQuantized(q, 10)
		for _, h := range got {
			if want[h.ID] {
				found++
			}
		}
		total += 10
	}
	if rec := float64(found) / float64(total); rec < 0.98 {
		t.Fatalf("quantized recall@10 %.3f < 0.98", rec)
	}
}

func TestDotsI8MatchesGo(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const dims, n = 64, 300
	q := make([]int8, dims)
	rows := make([]int8, dims*n)
	for i := range q {
		q[i] = int8(r.Intn(255) - 127)
	}
	for i := range rows {
		rows[i] = int8(r.Intn(255) - 127)
	}
	a, b := make([]int32, n), make([]int32, n)
	dotsI8(q, rows, dims, a)
	dotsI8Go(q, rows, dims, b)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d: %d vs %d", i, a[i], b[i])
		}
	}
}
