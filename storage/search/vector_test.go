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

// Sparse vectors like the built-in embedder's (a few dozen words hashed
// into 1,024 dimensions; queries of a few words): the scan reads only the
// query's non-zero groups and still finds the exact top 10 (ties with the
// 10th count as found).
func TestQuantizedSearchSparse(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	const dims = 1024
	sparse := func(nz int) []float32 {
		v := make([]float32, dims)
		var n float64
		for range nz {
			i := r.Intn(dims)
			v[i] += float32(1 + r.ExpFloat64())
			if r.Intn(2) == 0 {
				v[i] = -v[i]
			}
		}
		for _, x := range v {
			n += float64(x * x)
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
		return v
	}
	sp := NewVectorSpace(dims, 0)
	for i := range 20_000 {
		sp.Put(int64(i), sparse(80))
	}
	sp.Quantize()
	var found, total int
	for range 50 {
		q := sparse(3)
		want := sp.SearchExact(q, 10)
		for _, h := range sp.Search(q, 10, nil) {
			if h.Score >= want[len(want)-1].Score-1e-6 && Dot(q, sp.row(sp.pos[h.ID])) >= want[len(want)-1].Score-1e-6 {
				found++
			}
		}
		total += len(want)
	}
	if rec := float64(found) / float64(total); rec < 0.98 {
		t.Fatalf("sparse recall@10 %.3f < 0.98", rec)
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

// The int8 kernel in use (AVX2 where the CPU has it) agrees with the
// portable one, for dense and for sparse queries.
func TestQscanMatchesGo(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const dims, n = 100, 300
	sp := NewVectorSpace(dims, n)
	for i := range n {
		sp.Put(int64(i), randUnit(r, dims))
	}
	sp.Quantize()
	q := sp.q
	for _, nz := range []int{dims, 3} {
		query := make([]float32, dims)
		for range nz {
			query[r.Intn(dims)] = float32(r.NormFloat64())
		}
		var qq qquery
		qq.prepare(q, query)
		blocks := (n + qRows - 1) / qRows
		a, b := make([]int32, blocks*qRows), make([]int32, blocks*qRows)
		qscan(q.data, q.blockBytes(), &qq, a)
		qscanGo(q.data, q.blockBytes(), &qq, b)
		for i := range n {
			if a[i] != b[i] {
				t.Fatalf("nz %d row %d: %d vs %d", nz, i, a[i], b[i])
			}
			var want int32 // straight from the row's int8 values
			for d := range dims {
				want += int32(qq.q8[d]) * int32(q.data[q.base(i)+d/qGroup*qGroupBytes+d%qGroup])
			}
			if a[i] != want {
				t.Fatalf("nz %d row %d: %d, want %d", nz, i, a[i], want)
			}
		}
	}
}

// Dot (FMA where the CPU has it) agrees with the portable loop at every length.
func TestDotMatchesGo(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := range 300 {
		a, b := make([]float32, n), make([]float32, n+3)
		for i := range a {
			a[i] = r.Float32() - .5
		}
		for i := range b {
			b[i] = r.Float32() - .5
		}
		if x, y := Dot(a, b), dotGo(a, b); math.Abs(float64(x-y)) > 1e-4 {
			t.Fatalf("len %d: %v vs %v", n, x, y)
		}
	}
}
