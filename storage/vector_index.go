package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/agentd/agentd/storage/search"
)

// VectorIndex is the in-memory mirror of the vectors table used for
// search: one search.VectorSpace per space, loaded from SQLite on the first
// search of that space (or by Warm) and kept in step with every committed
// write, by this process or another one on the same file, by replaying
// vector_log before each search. SQLite stays the source of truth; a
// restart rebuilds the mirror. It is safe for concurrent use.
//
// Typical use (any feature):
//
//	db.PutVectors(ctx, "listings:"+orgID, model, items) // or putVectors inside a storage tx
//	hits, err := idx.Search(ctx, "listings:"+orgID, queryVec, 20, nil)
type VectorIndex struct {
	db *DB

	syncMu  sync.Mutex // one catch-up at a time
	mark    walMark    // the database's state at the last catch-up
	mu      sync.RWMutex
	lastSeq int64
	spaces  map[string]*search.VectorSpace
}

// VectorHit is one vector search result (see search.VectorHit).
type VectorHit = search.VectorHit

// NewVectorIndex returns an empty mirror of db's vectors; spaces load lazily.
func NewVectorIndex(db *DB) *VectorIndex {
	return &VectorIndex{db: db, spaces: map[string]*search.VectorSpace{}}
}

// Warm loads every space whose name starts with prefix ("" for all), so the
// first search after a start does not pay for the load.
func (x *VectorIndex) Warm(ctx context.Context, prefix string) error {
	rows, err := x.db.r.QueryContext(ctx, "SELECT space FROM vector_spaces WHERE space LIKE ? ESCAPE '\\'", likeEscape(prefix)+"%")
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		names = append(names, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
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
	m := x.db.walMark(ctx)
	if x.mark.same(m) && loadedAll(x.spaces, load) {
		return nil // nothing committed since the last catch-up
	}
	tx, err := x.db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("storage: vector sync: %w", err)
	}
	defer tx.Rollback()
	d, err := readLogDelta(ctx, tx, x.lastSeq, func(s string) bool { _, ok := x.spaces[s]; return ok }, len(x.spaces) > 0, load)
	if err != nil {
		return err
	}
	if d.reloadAll { // the log was pruned past us: start over
		for s := range x.spaces {
			d.reload[s] = true
		}
	}
	reload, changed, maxSeq := d.reload, d.changed, d.maxSeq
	loaded := map[string]*search.VectorSpace{}
	for s := range reload {
		sp, err := loadSpace(ctx, tx, s)
		if err != nil {
			return err
		}
		loaded[s] = sp
		delete(changed, s)
	}
	updates := map[string][]VectorItem{}
	for s, ids := range changed {
		items, err := readVectors(ctx, tx, s, ids)
		if err != nil {
			return err
		}
		updates[s] = items
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

// walMark is the database's state when it was read, so a mirror can skip
// its catch-up query while nothing was committed since. On SQLite it is
// the WAL index header, which SQLite rewrites on every commit of any
// process (ok is false without a mapped WAL index: then the mirror always
// catches up). PostgreSQL has no such header: there it is the latest
// vector_log seq, one read of the primary key's end, cheaper than the
// catch-up's transaction (writes commit one at a time under the write
// lock, so seqs become visible in order). The mark is read before the
// catch-up, so a commit racing with it only causes one more catch-up.
type walMark struct {
	hdr [48]byte
	seq int64
	ok  bool
}

func (db *DB) walMark(ctx context.Context) walMark {
	if db.Postgres() {
		var seq int64
		if err := db.readRow(ctx, "SELECT coalesce(max(seq), 0) FROM vector_log").Scan(&seq); err != nil {
			return walMark{} // the catch-up runs and reports the error
		}
		return walMark{seq: seq, ok: true}
	}
	h, ok := db.c.WALHeader() // not ok where the WAL index cannot be mapped
	return walMark{hdr: h, ok: ok}
}

// same reports whether both marks were read and are equal.
func (m walMark) same(o walMark) bool { return m.ok && o.ok && m == o }

// loadedAll reports whether every named space is in the mirror.
func loadedAll[S any](spaces map[string]S, names []string) bool {
	for _, s := range names {
		if _, ok := spaces[s]; !ok {
			return false
		}
	}
	return true
}

// logDelta is what vector_log says a mirror (of vectors or text) must do
// to catch up: spaces to load whole, and ids changed per space it holds.
type logDelta struct {
	maxSeq    int64
	reload    map[string]bool
	reloadAll bool // the log was pruned past the mirror: reload what it holds
	changed   map[string][]int64
}

// readLogDelta reads vector_log after last for a mirror that holds the
// spaces have reports (holding any at all when holdsAny), and that is asked
// to load the spaces in load. A whole-space entry (item_id NULL) reloads it.
func readLogDelta(ctx context.Context, tx *sql.Tx, last int64, have func(string) bool, holdsAny bool, load []string) (logDelta, error) {
	d := logDelta{reload: map[string]bool{}, changed: map[string][]int64{}}
	var minSeq int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce((SELECT max(seq) FROM vector_log), 0), coalesce((SELECT min(seq) FROM vector_log), 0)").Scan(&d.maxSeq, &minSeq); err != nil {
		return d, fmt.Errorf("storage: vector log: %w", err)
	}
	for _, s := range load {
		if !have(s) {
			d.reload[s] = true
		}
	}
	if d.maxSeq <= last || !holdsAny {
		return d, nil
	}
	if minSeq > last+1 {
		d.reloadAll = true
		return d, nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT space, item_id FROM vector_log WHERE seq > ? AND seq <= ? ORDER BY seq", last, d.maxSeq)
	if err != nil {
		return d, fmt.Errorf("storage: vector log: %w", err)
	}
	defer rows.Close()
	seen := map[string]map[int64]bool{}
	for rows.Next() {
		var s string
		var id sql.NullInt64
		if err := rows.Scan(&s, &id); err != nil {
			return d, err
		}
		if !have(s) || d.reload[s] {
			continue
		}
		if !id.Valid {
			d.reload[s] = true
			continue
		}
		if seen[s] == nil {
			seen[s] = map[int64]bool{}
		}
		if !seen[s][id.Int64] {
			seen[s][id.Int64] = true
			d.changed[s] = append(d.changed[s], id.Int64)
		}
	}
	return d, rows.Err()
}

// loadSpace reads every vector of a space (an empty space when it has no
// vectors yet) and builds its int8 copy.
func loadSpace(ctx context.Context, tx *sql.Tx, space string) (*search.VectorSpace, error) {
	var dims int
	err := tx.QueryRowContext(ctx, "SELECT dims FROM vector_spaces WHERE space = ?", space).Scan(&dims)
	if err == sql.ErrNoRows {
		return search.NewVectorSpace(0, 0), nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: load vector space: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM vectors WHERE space = ?", space).Scan(&n); err != nil {
		return nil, err
	}
	sp := search.NewVectorSpace(dims, n)
	rows, err := tx.QueryContext(ctx, "SELECT item_id, vec FROM vectors WHERE space = ?", space)
	if err != nil {
		return nil, fmt.Errorf("storage: load vector space: %w", err)
	}
	defer rows.Close()
	v := make([]float32, 0, dims)
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, err
		}
		if len(b) != 4*dims {
			continue // written for another model before a reset; never searched
		}
		sp.Put(id, decodeVectorInto(v[:0], b))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sp.Quantize()
	return sp, nil
}

// readVectors reads the current vectors of ids in a space (absent ids are
// simply missing from the result).
func readVectors(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]VectorItem, error) {
	var out []VectorItem
	for len(ids) > 0 {
		n := min(len(ids), 500)
		part := ids[:n]
		ids = ids[n:]
		args := make([]any, 0, n+1)
		args = append(args, space)
		for _, id := range part {
			args = append(args, id)
		}
		q := "SELECT item_id, vec FROM vectors WHERE space = ? AND item_id IN (" + strings.Repeat("?,", n-1) + "?)"
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("storage: read vectors: %w", err)
		}
		for rows.Next() {
			var it VectorItem
			var b []byte
			if err := rows.Scan(&it.ID, &b); err != nil {
				rows.Close()
				return nil, err
			}
			it.Vec = decodeVectorInto(nil, b)
			out = append(out, it)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
