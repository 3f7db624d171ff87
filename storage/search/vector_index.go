package search

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
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
	src VectorSource

	syncMu  sync.Mutex // one catch-up at a time
	mark    Mark       // the database's state at the last catch-up
	mu      sync.RWMutex
	lastSeq int64
	spaces  map[string]*VectorSpace
}

// NewVectorIndex returns an empty mirror of src's vectors; spaces load lazily.
func NewVectorIndex(src VectorSource) *VectorIndex {
	return &VectorIndex{src: src, spaces: map[string]*VectorSpace{}}
}

// Warm loads every space whose name starts with prefix ("" for all), so the
// first search after a start does not pay for the load.
func (x *VectorIndex) Warm(ctx context.Context, prefix string) error {
	names, err := x.src.Spaces(ctx, prefix)
	if err != nil {
		return err
	}
	return x.sync(ctx, names...)
}

// Len is the number of vectors of a space in the mirror after catching up.
func (x *VectorIndex) Len(ctx context.Context, space string) (int, error) {
	if err := x.sync(ctx, space); err != nil {
		return 0, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.spaces[space].Len(), nil
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
	if err := x.sync(ctx, space); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.spaces[space].Search(query, k, allow), nil
}

// SearchExact is Search without the int8 coarse pass: every vector scored
// in float32. It is the reference that recall is measured against.
func (x *VectorIndex) SearchExact(ctx context.Context, space string, query []float32, k int) ([]VectorHit, error) {
	if k <= 0 || len(query) == 0 {
		return nil, nil
	}
	if err := x.sync(ctx, space); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.spaces[space].SearchExact(query, k), nil
}

// sync replays vector_log since the last catch-up onto the loaded spaces and
// loads the named spaces not loaded yet, all from one read snapshot.
func (x *VectorIndex) sync(ctx context.Context, load ...string) error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	m := x.src.Mark(ctx)
	if x.mark.same(m) && loadedAll(x.spaces, load) {
		return nil // nothing committed since the last catch-up
	}
	var (
		loaded  map[string]*VectorSpace
		changed map[string][]int64
		updates map[string][]Vector
		maxSeq  int64
	)
	have := func(s string) bool { _, ok := x.spaces[s]; return ok }
	err := x.src.Changes(ctx, x.lastSeq, have, len(x.spaces) > 0, load, func(tx *sql.Tx, d Delta) error {
		if d.ReloadAll { // the log was pruned past us: start over
			for s := range x.spaces {
				d.Reload[s] = true
			}
		}
		changed, maxSeq = d.Changed, d.MaxSeq
		loaded = map[string]*VectorSpace{}
		for s := range d.Reload {
			sp, err := x.src.LoadSpace(ctx, tx, s)
			if err != nil {
				return err
			}
			loaded[s] = sp
			delete(changed, s)
		}
		updates = map[string][]Vector{}
		for s, ids := range changed {
			items, err := x.src.ReadVectors(ctx, tx, s, ids)
			if err != nil {
				return err
			}
			updates[s] = items
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("vector sync: %w", err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for s, sp := range loaded {
		x.spaces[s] = sp
	}
	for s, items := range updates {
		sp := x.spaces[s]
		found := make(map[int64]bool, len(items))
		for _, it := range items {
			found[it.ID] = true
			sp.Put(it.ID, it.Vec)
		}
		for _, id := range changed[s] {
			if !found[id] {
				sp.Remove(id)
			}
		}
	}
	x.lastSeq = maxSeq
	x.mark = m
	return nil
}
