package search

import (
	"context"
)

// VectorIndex is the in-memory mirror of the vectors table used for
// search: one VectorSpace per space, loaded from the database on the first
// search of that space (or by Warm) and kept in step with every committed
// write, by this process or another one on the same file, by replaying
// the change log (storage/vectorstore) before each search. SQLite stays the source of truth; a
// restart rebuilds the mirror. It is safe for concurrent use.
//
// Typical use (any feature):
//
//	stores.Vectors.PutVectors(ctx, "listings:"+orgID, model, items)
//	hits, err := idx.Search(ctx, "listings:"+orgID, queryVec, 20, nil)
type VectorIndex struct {
	m *mirror[*VectorSpace, Vector]
}

// NewVectorIndex returns an empty mirror of src's vectors; spaces load lazily.
func NewVectorIndex(src VectorSource) *VectorIndex {
	return &VectorIndex{m: &mirror[*VectorSpace, Vector]{log: src, loadSpace: src.LoadSpace, readItems: src.ReadVectors,
		apply: putVectors, spaces: map[string]*VectorSpace{}}}
}

// putVectors applies the current vectors of changed ids to sp: ids with no
// vector any more are removed.
func putVectors(sp *VectorSpace, changed []int64, items []Vector) {
	found := make(map[int64]bool, len(items))
	for _, it := range items {
		found[it.ID] = true
		sp.Put(it.ID, it.Vec)
	}
	for _, id := range changed {
		if !found[id] {
			sp.Remove(id)
		}
	}
}

// Warm loads every space whose name starts with prefix ("" for all), so the
// first search after a start does not pay for the load.
func (x *VectorIndex) Warm(ctx context.Context, prefix string) error { return x.m.warm(ctx, prefix) }

// Len is the number of vectors of a space in the mirror after catching up.
func (x *VectorIndex) Len(ctx context.Context, space string) (int, error) {
	if err := x.m.sync(ctx, space); err != nil {
		return 0, err
	}
	x.m.mu.RLock()
	defer x.m.mu.RUnlock()
	return x.m.spaces[space].Len(), nil
}

// Search returns the k items of space closest to query (cosine), best
// first. allow, when not nil, restricts the search to those ids (a
// candidate filter computed by the caller, e.g. listings matching a price
// range); ids absent from the space are ignored. A space without vectors, or
// a query of other dimensions than the space's, gives no hits.
func (x *VectorIndex) Search(ctx context.Context, space string, query []float32, k int, allow []int64) ([]VectorHit, error) {
	if k <= 0 || len(query) == 0 {
		return nil, nil
	}
	if err := x.m.sync(ctx, space); err != nil {
		return nil, err
	}
	x.m.mu.RLock()
	defer x.m.mu.RUnlock()
	return x.m.spaces[space].Search(query, k, allow), nil
}

// SearchExact is Search without the int8 coarse pass: every vector scored
// in float32. It is the reference that recall is measured against.
func (x *VectorIndex) SearchExact(ctx context.Context, space string, query []float32, k int) ([]VectorHit, error) {
	if k <= 0 || len(query) == 0 {
		return nil, nil
	}
	if err := x.m.sync(ctx, space); err != nil {
		return nil, err
	}
	x.m.mu.RLock()
	defer x.m.mu.RUnlock()
	return x.m.spaces[space].SearchExact(query, k), nil
}
