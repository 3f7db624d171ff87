package search

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
)

// benchSpace builds a mirror space of n random unit vectors (the hard case
// for any approximation: no clusters to exploit).
func benchSpace(n, dims int) *VectorSpace {
	r := rand.New(rand.NewSource(42))
	sp := NewVectorSpace(dims, n)
	for i := range n {
		sp.Put(int64(i), randUnit(r, dims))
	}
	sp.Quantize()
	return sp
}

// recallAt10 compares the int8+rerank search with exact float32 search.
func recallAt10(sp *VectorSpace, queries [][]float32) float64 {
	found := 0
	for _, q := range queries {
		want := map[int64]bool{}
		for _, h := range sp.searchIDs(q, 10, sp.ids) {
			want[h.ID] = true
		}
		for _, h := range sp.search(q, 10) {
			if want[h.ID] {
				found++
			}
		}
	}
	return float64(found) / float64(10*len(queries))
}

// BenchmarkVectorSearch is the vector part of search over 100,000 vectors:
// int8 coarse pass on all cores + exact float32 rerank of the best 100.
// Reports recall@10 against exact search and the mirror's memory.
//
//	go test ./storage/search -run '^$' -bench VectorSearch -benchtime 200x -count 3
func BenchmarkVectorSearch(b *testing.B) {
	for _, dims := range []int{384, 1536} {
		b.Run(fmt.Sprintf("n=100000/dims=%d", dims), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			sp := benchSpace(100_000, dims)
			runtime.GC()
			runtime.ReadMemStats(&after)
			r := rand.New(rand.NewSource(9))
			queries := make([][]float32, 50)
			for i := range queries {
				queries[i] = randUnit(r, dims)
			}
			i := 0
			for b.Loop() {
				sp.search(queries[i%len(queries)], 10)
				i++
			}
			b.ReportMetric(recallAt10(sp, queries), "recall@10")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB")
		})
	}
}

// BenchmarkVectorSearchExact is the plain float32 scan, for comparison.
func BenchmarkVectorSearchExact(b *testing.B) {
	sp := benchSpace(100_000, 384)
	sp.q = nil
	q := randUnit(rand.New(rand.NewSource(1)), 384)
	for b.Loop() {
		sp.search(q, 10)
	}
}
