package search

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"
)

// benchSpace builds a space of n random unit vectors (the hard case for
// any approximation: dense, no clusters to exploit; a real embedding model
// gives dense vectors too).
func benchSpace(n, dims int) *VectorSpace {
	r := rand.New(rand.NewSource(42))
	sp := NewVectorSpace(dims, n)
	for i := range n {
		sp.Put(int64(i), randUnit(r, dims))
	}
	sp.Quantize()
	return sp
}

// exactParallel is the reference: the float32 matrix scanned on all cores
// (FMA dot products), every vector scored exactly.
func exactParallel(sp *VectorSpace, q []float32, k int) []VectorHit {
	qm := sp.q
	sp.q = nil
	defer func() { sp.q = qm }()
	return sp.search(q, k)
}

// BenchmarkVectorSearch is the vector index over 100,000 dense random unit
// vectors: the int8 scan on all cores plus the exact float32 rerank of the
// best 100, against the exact float32 scan on all cores timed in the same
// iterations (exact-ms, ratio). Reports recall@10 against exact search and
// the memory of the space (float32 + int8 copy).
//
//	go test ./storage/search -run '^$' -bench VectorSearch -benchtime 100x
func BenchmarkVectorSearch(b *testing.B) {
	for _, dims := range []int{384, 1024, 1536} {
		b.Run(fmt.Sprintf("n=100000/dims=%d", dims), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			sp := benchSpace(100_000, dims)
			runtime.GC()
			runtime.ReadMemStats(&after)
			r := rand.New(rand.NewSource(9))
			var tIdx, tExact time.Duration
			found, total := 0, 0
			for b.Loop() {
				q := randUnit(r, dims) // a new query every time
				t0 := time.Now()
				got := sp.search(q, 10)
				t1 := time.Now()
				want := exactParallel(sp, q, 10)
				tIdx += t1.Sub(t0)
				tExact += time.Since(t1)
				in := map[int64]bool{}
				for _, h := range want {
					in[h.ID] = true
				}
				for _, h := range got {
					if in[h.ID] {
						found++
					}
				}
				total += len(want)
			}
			b.ReportMetric(float64(tIdx)/float64(b.N)/1e6, "index-ms")
			b.ReportMetric(float64(tExact)/float64(b.N)/1e6, "exact-ms")
			b.ReportMetric(float64(tIdx)/float64(tExact), "index/exact")
			b.ReportMetric(float64(found)/float64(total), "recall@10")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB")
		})
	}
}
