package search

import (
	"math"
	"math/rand"
	"testing"
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

func TestQuantizedSearchMatchesExact(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	const dims = 100 // not a multiple of 32: padding path
	sp := NewVectorSpace(dims, 0)
	for i := range 5000 {
		sp.Put(int64(i), randUnit(r, dims))
	}
	sp.Quantize()
	for i := range 200 { // edits after the build keep the int8 copy in step
		sp.Remove(int64(i * 7))
		sp.Put(int64(10000+i), randUnit(r, dims))
	}
	var found, total int
	for range 30 {
		q := randUnit(r, dims)
		want := map[int64]bool{}
		for _, h := range sp.SearchExact(q, 10) {
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

// Put replaces, Remove forgets, allow restricts, and a query of other
// dimensions finds nothing.
func TestVectorSpaceEdits(t *testing.T) {
	sp := NewVectorSpace(2, 0)
	sp.Put(1, []float32{1, 0})
	sp.Put(2, []float32{0, 1})
	sp.Put(3, []float32{1, 0, 0}) // another model's vector: skipped
	if sp.Len() != 2 {
		t.Fatalf("len %d", sp.Len())
	}
	if h := sp.Search([]float32{0, 1}, 1, nil); len(h) != 1 || h[0].ID != 2 {
		t.Fatalf("hits %v", h)
	}
	sp.Put(2, []float32{1, 0})
	sp.Remove(1)
	sp.Remove(99)
	if h := sp.Search([]float32{1, 0}, 5, nil); len(h) != 1 || h[0].ID != 2 || h[0].Score < 0.99 {
		t.Fatalf("after edits %v", h)
	}
	if h := sp.Search([]float32{1, 0}, 5, []int64{1, 99}); len(h) != 0 {
		t.Fatalf("allow list %v", h)
	}
	if h := sp.Search([]float32{1, 0, 0}, 5, nil); len(h) != 0 {
		t.Fatalf("other dims %v", h)
	}
	var empty *VectorSpace
	if empty.Len() != 0 {
		t.Fatal("nil space not empty")
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
