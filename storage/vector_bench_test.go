package storage

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
)

// benchSpace builds a mirror space of n random unit vectors (the hard case
// for any approximation: no clusters to exploit).
func benchSpace(n, dims int) *vspace {
	r := rand.New(rand.NewSource(42))
	sp := &vspace{dims: dims, pos: make(map[int64]int, n), ids: make([]int64, 0, n), vecs: make([]float32, 0, n*dims)}
	for i := range n {
		sp.pos[int64(i)] = i
		sp.ids = append(sp.ids, int64(i))
		sp.vecs = append(sp.vecs, randUnit(r, dims)...)
	}
	sp.requantize()
	return sp
}

// recallAt10 compares the int8+rerank search with exact float32 search.
func recallAt10(sp *vspace, queries [][]float32) float64 {
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
//	go test ./storage -run '^$' -bench VectorSearch -benchtime 200x -count 3
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
