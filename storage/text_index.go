package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// TextIndex is an in-memory BM25 index (k1 1.2, b 0.75, idf
// ln(1+(N-n+0.5)/(n+0.5))) per space, the keyword half of hybrid search.
// FTS5's bm25() costs microseconds per matching row in this pure-Go
// SQLite, so a query with a frequent word over 100,000 chunks took most of
// a second; postings in memory answer it in about a millisecond. Like
// VectorIndex it is a mirror: SQLite (the chunk text) stays the source of
// truth, spaces load on first use, and vector_log (every indexed item is
// also a vector, written in the same transaction) tells it what changed in
// this or another process. Words are lowercased runs of letters and digits,
// stemmed with Snowball English. Safe for concurrent use.
type TextIndex struct {
	db     *DB
	load   TextLoader
	stem   *stemmer
	syncMu sync.Mutex
	mu     sync.RWMutex
	last   int64
	spaces map[string]*tspace
}

// TextDoc is one document of a text space.
type TextDoc struct {
	ID   int64
	Text string
}

// TextLoader reads the documents of a space from the database: all of
// them when ids is nil, else those of ids that exist.
type TextLoader func(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]TextDoc, error)

// NewTextIndex returns an empty mirror that loads spaces with load.
func NewTextIndex(db *DB, load TextLoader) *TextIndex {
	return &TextIndex{db: db, load: load, stem: &stemmer{}, spaces: map[string]*tspace{}}
}

// NewKBTextIndex is the text index of knowledge chunks (space
// "kb:<collectionId>"): title, heading path and chunk text.
func NewKBTextIndex(db *DB) *TextIndex { return NewTextIndex(db, loadKBText) }

func loadKBText(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]TextDoc, error) {
	col, ok := strings.CutPrefix(space, "kb:")
	if !ok {
		return nil, nil
	}
	q := `SELECT c.id, s.title, c.heading_path, c.content FROM kb_chunks c JOIN kb_sources s ON s.id = c.source_id WHERE c.collection_id = ?`
	args := []any{col}
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		q += " AND c.id IN (" + strings.Repeat("?,", len(ids)-1) + "?)"
		for _, id := range ids {
			args = append(args, id)
		}
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: load chunk text: %w", err)
	}
	defer rows.Close()
	var out []TextDoc
	for rows.Next() {
		var d TextDoc
		var title, hp, content string
		if err := rows.Scan(&d.ID, &title, &hp, &content); err != nil {
			return nil, err
		}
		var path []string
		json.Unmarshal([]byte(hp), &path)
		d.Text = title + "\n" + strings.Join(path, "\n") + "\n" + content
		out = append(out, d)
	}
	return out, rows.Err()
}

// Warm loads every space whose name starts with prefix.
func (x *TextIndex) Warm(ctx context.Context, prefix string) error {
	rows, err := x.db.r.QueryContext(ctx, "SELECT space FROM vector_spaces WHERE space LIKE ? ESCAPE '\\'", likeEscape(prefix)+"%")
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		names = append(names, s)
	}
	rows.Close()
	return x.sync(ctx, names...)
}

// Search returns the k best documents of space for the words of query by
// BM25 (a repeated word counts each time), best first. allow, when not nil,
// restricts the result to those ids.
func (x *TextIndex) Search(ctx context.Context, space, query string, k int, allow []int64) ([]ScoredID, error) {
	terms := x.stem.tokenize(query, nil)
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	if err := x.sync(ctx, space); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	sp := x.spaces[space]
	if sp == nil || sp.alive == 0 {
		return nil, nil
	}
	var allowed map[int32]bool
	if allow != nil {
		allowed = make(map[int32]bool, len(allow))
		for _, id := range allow {
			if r, ok := sp.pos[id]; ok {
				allowed[r] = true
			}
		}
	}
	return sp.search(terms, k, allowed), nil
}

// sync catches up with vector_log and loads the named spaces (see VectorIndex.sync).
func (x *TextIndex) sync(ctx context.Context, load ...string) error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	tx, err := x.db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	d, err := readLogDelta(ctx, tx, x.last, func(s string) bool { _, ok := x.spaces[s]; return ok }, len(x.spaces) > 0, load)
	if err != nil {
		return fmt.Errorf("storage: text sync: %w", err)
	}
	if d.reloadAll {
		for s := range x.spaces {
			d.reload[s] = true
		}
	}
	reload, changed, maxSeq := d.reload, d.changed, d.maxSeq
	fresh := map[string]*tspace{}
	for s := range reload {
		docs, err := x.load(ctx, tx, s, nil)
		if err != nil {
			return err
		}
		sp := newTSpace(x.stem)
		for _, d := range docs {
			sp.add(d.ID, d.Text)
		}
		fresh[s] = sp
		delete(changed, s)
	}
	updates := map[string][]TextDoc{}
	for s, ids := range changed {
		docs, err := x.load(ctx, tx, s, ids)
		if err != nil {
			return err
		}
		updates[s] = docs
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for s, sp := range fresh {
		x.spaces[s] = sp
	}
	for s, ids := range changed {
		sp := x.spaces[s]
		for _, id := range ids {
			sp.remove(id)
		}
		for _, d := range updates[s] {
			sp.add(d.ID, d.Text)
		}
		sp.maybeCompact()
	}
	x.last = maxSeq
	return nil
}

// tspace is one space's inverted index. Removed documents stay in the
// postings (skipped, dead) until a compaction drops them.
type tspace struct {
	stem     *stemmer
	ids      []int64
	pos      map[int64]int32
	lens     []uint32
	live     []bool
	post     map[string]*plist
	totalLen int64
	alive    int
	dead     int
}

type plist struct {
	docs []int32
	tfs  []uint16
}

func newTSpace(st *stemmer) *tspace {
	return &tspace{stem: st, pos: map[int64]int32{}, post: map[string]*plist{}}
}

func (sp *tspace) add(id int64, text string) {
	if _, ok := sp.pos[id]; ok {
		sp.remove(id)
	}
	terms := sp.stem.tokenize(text, nil)
	row := int32(len(sp.ids))
	sp.ids = append(sp.ids, id)
	sp.pos[id] = row
	sp.lens = append(sp.lens, uint32(len(terms)))
	sp.live = append(sp.live, true)
	sp.totalLen += int64(len(terms))
	sp.alive++
	tf := map[string]int{}
	for _, t := range terms {
		tf[t]++
	}
	for t, n := range tf {
		p := sp.post[t]
		if p == nil {
			p = &plist{}
			sp.post[t] = p
		}
		p.docs = append(p.docs, row)
		p.tfs = append(p.tfs, uint16(min(n, math.MaxUint16)))
	}
}

func (sp *tspace) remove(id int64) {
	row, ok := sp.pos[id]
	if !ok {
		return
	}
	delete(sp.pos, id)
	sp.live[row] = false
	sp.totalLen -= int64(sp.lens[row])
	sp.alive--
	sp.dead++
	// Document frequencies keep counting it until the next compaction
	// (at most a fifth of the rows): a small idf error, no text to re-read.
}

// maybeCompact rebuilds the postings once a fifth of the rows are dead.
func (sp *tspace) maybeCompact() {
	if sp.dead*5 < len(sp.ids) || sp.dead == 0 {
		return
	}
	remap := make([]int32, len(sp.ids))
	n := newTSpace(sp.stem)
	for r, id := range sp.ids {
		remap[r] = -1
		if sp.live[r] {
			remap[r] = int32(len(n.ids))
			n.pos[id] = remap[r]
			n.ids = append(n.ids, id)
			n.lens = append(n.lens, sp.lens[r])
			n.live = append(n.live, true)
		}
	}
	for t, p := range sp.post {
		q := &plist{}
		for i, d := range p.docs {
			if remap[d] >= 0 {
				q.docs = append(q.docs, remap[d])
				q.tfs = append(q.tfs, p.tfs[i])
			}
		}
		if len(q.docs) > 0 {
			n.post[t] = q
		}
	}
	n.totalLen, n.alive = sp.totalLen, sp.alive
	*sp = *n
}

// search scores with BM25 and keeps the k best.
func (sp *tspace) search(terms []string, k int, allowed map[int32]bool) []ScoredID {
	const k1, b = 1.2, 0.75
	mult := map[string]int{}
	for _, t := range terms {
		mult[t]++
	}
	n := float64(sp.alive)
	avgdl := float64(sp.totalLen) / n
	scores := make([]float32, len(sp.ids))
	var touched []int32
	for t, m := range mult {
		p := sp.post[t]
		if p == nil {
			continue
		}
		df := min(float64(len(p.docs)), n)
		w := float64(m) * math.Log(1+(n-df+0.5)/(df+0.5))
		for i, d := range p.docs {
			if !sp.live[d] || (allowed != nil && !allowed[d]) {
				continue
			}
			tf := float64(p.tfs[i])
			if scores[d] == 0 {
				touched = append(touched, d)
			}
			scores[d] += float32(w * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(sp.lens[d])/avgdl)))
		}
	}
	t := newTopK(k)
	for _, d := range touched {
		t.offer(d, scores[d])
	}
	out := make([]ScoredID, 0, len(t.h))
	for _, e := range t.h {
		out = append(out, ScoredID{ID: sp.ids[e.row], Score: float64(e.score)})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].ID < out[b].ID
	})
	return out
}

// stemmer caches Snowball English stems (words are Zipf-distributed, so a
// bounded cache catches nearly every occurrence).
type stemmer struct {
	m sync.Map
	n atomic.Int64
}

const stemCacheMax = 200_000

// tokenize appends the stemmed words of text to dst.
func (st *stemmer) tokenize(text string, dst []string) []string {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}) {
		if s, ok := st.m.Load(w); ok {
			dst = append(dst, s.(string))
			continue
		}
		s := w
		if len(w) <= 64 {
			s = english.Stem(w, false)
		}
		if st.n.Load() < stemCacheMax {
			st.m.Store(w, s)
			st.n.Add(1)
		}
		dst = append(dst, s)
	}
	return dst
}
