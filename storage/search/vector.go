package search

import (
	"runtime"
	"sort"
	"sync"
)

// VectorHit is one search result: the item id and its cosine similarity
// (dot product of unit vectors; higher is closer).
type VectorHit struct {
	ID    int64
	Score float32
}

// VectorSpace is exact nearest-neighbour search over one space's vectors
// (one embedder's vectors of one feature: a collection's chunks, an
// organization's listings), held in memory as one contiguous row-major
// float32 matrix (row i is vecs[i*dims:(i+1)*dims]) plus, once Quantize has
// run, an int8 copy for a coarse pass. A brute-force scan stays exact and
// needs no tuning; at 100,000 vectors it answers in a few milliseconds.
// Vectors should be L2-normalised: scores are dot products. Not safe for
// concurrent writes: callers hold a lock (reads may run together).
type VectorSpace struct {
	dims int
	ids  []int64
	vecs []float32
	pos  map[int64]int // id -> row
	q    *qmatrix      // int8 copy for the coarse pass; nil until Quantize
}

// NewVectorSpace returns an empty space of dims-long vectors with room for
// capacity of them.
func NewVectorSpace(dims, capacity int) *VectorSpace {
	return &VectorSpace{dims: dims, ids: make([]int64, 0, capacity), vecs: make([]float32, 0, capacity*dims),
		pos: make(map[int64]int, capacity)}
}

// Len is the number of vectors (0 for a nil space).
func (sp *VectorSpace) Len() int {
	if sp == nil {
		return 0
	}
	return len(sp.ids)
}

func (sp *VectorSpace) row(i int) []float32 { return sp.vecs[i*sp.dims : (i+1)*sp.dims] }

// Put inserts or replaces a vector (vectors of other dimensions are skipped:
// they belong to a model the space was reset away from).
func (sp *VectorSpace) Put(id int64, v []float32) {
	if len(v) != sp.dims {
		return
	}
	if i, ok := sp.pos[id]; ok {
		copy(sp.row(i), v)
		sp.q.set(i, v)
		return
	}
	sp.pos[id] = len(sp.ids)
	sp.ids = append(sp.ids, id)
	sp.vecs = append(sp.vecs, v...)
	sp.q.add(v)
}

// Remove deletes a vector by moving the last row into its place; an
// unknown id is ignored.
func (sp *VectorSpace) Remove(id int64) {
	i, ok := sp.pos[id]
	if !ok {
		return
	}
	last := len(sp.ids) - 1
	if i != last {
		copy(sp.row(i), sp.row(last))
		sp.ids[i] = sp.ids[last]
		sp.pos[sp.ids[i]] = i
		sp.q.move(last, i)
	}
	sp.ids = sp.ids[:last]
	sp.vecs = sp.vecs[:last*sp.dims]
	sp.q.truncate(last)
	delete(sp.pos, id)
}

// minParallelRows is the smallest slice of rows worth its own goroutine.
const minParallelRows = 8192

// Search returns the k vectors closest to query (highest dot product), best
// first, ties by lower id. allow, when not nil, restricts the search to
// those ids (a candidate filter computed by the caller); ids absent from the
// space are ignored. A query of other dimensions than the space's gives no
// hits.
func (sp *VectorSpace) Search(query []float32, k int, allow []int64) []VectorHit {
	if k <= 0 || sp.Len() == 0 || len(query) != sp.dims {
		return nil
	}
	if allow != nil {
		return sp.searchIDs(query, k, allow)
	}
	return sp.search(query, k)
}

// SearchExact is Search over every vector without the int8 coarse pass:
// every vector scored in float32. It is the reference that recall is
// measured against.
func (sp *VectorSpace) SearchExact(query []float32, k int) []VectorHit {
	if k <= 0 || sp.Len() == 0 || len(query) != sp.dims {
		return nil
	}
	return sp.searchIDs(query, k, sp.ids)
}

// search is exact top-k by dot product over every row, split across cores.
// With an int8 copy it first scores rows on the int8 copy (a quarter of the
// memory traffic) and reranks the best candidates exactly.
func (sp *VectorSpace) search(query []float32, k int) []VectorHit {
	n := len(sp.ids)
	if sp.q != nil && n > 4*rerankDepth(k) {
		return sp.searchQuantized(query, k)
	}
	parts := splitRows(n, minParallelRows)
	tops := make([]topK, len(parts))
	var wg sync.WaitGroup
	for pi, pr := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := newTopK(k)
			for i := pr[0]; i < pr[1]; i++ {
				t.offer(int32(i), Dot(query, sp.row(i)))
			}
			tops[pi] = t
		}()
	}
	wg.Wait()
	return sp.merge(tops, k)
}

// searchIDs scores only the allowed ids.
func (sp *VectorSpace) searchIDs(query []float32, k int, allow []int64) []VectorHit {
	t := newTopK(k)
	for _, id := range allow {
		if i, ok := sp.pos[id]; ok {
			t.offer(int32(i), Dot(query, sp.row(i)))
		}
	}
	return sp.merge([]topK{t}, k)
}

// splitRows cuts [0, n) into one range per core (at least minPer each).
func splitRows(n, minPer int) [][2]int {
	p := min(runtime.GOMAXPROCS(0), max(1, n/minPer))
	per := (n + p - 1) / p
	var out [][2]int
	for s := 0; s < n; s += per {
		out = append(out, [2]int{s, min(n, s+per)})
	}
	return out
}

// merge combines per-part top lists into hits, best first (ties by lower id,
// so results are stable).
func (sp *VectorSpace) merge(tops []topK, k int) []VectorHit {
	var hits []VectorHit
	for _, t := range tops {
		for _, e := range t.h {
			hits = append(hits, VectorHit{ID: sp.ids[e.row], Score: e.score})
		}
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].Score != hits[b].Score {
			return hits[a].Score > hits[b].Score
		}
		return hits[a].ID < hits[b].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// dotGo is the portable float32 dot product, unrolled by 8 (dims of real embedders are
// multiples of 8; the tail loop covers the rest).
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
