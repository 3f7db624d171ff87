package storage

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/agentd/agentd/storage/search"
)

// ScoredID is a keyword search result (see search.ScoredID).
type ScoredID = search.ScoredID

// TextIndex is the in-memory mirror of one feature's searchable text: a
// search.TextSpace (BM25) per space. Like VectorIndex it is a mirror:
// SQLite (the text itself) stays the source of truth, spaces load on first
// use, and vector_log (the change log of every mirror: an indexed item's
// change is logged in the transaction that writes it) tells it what changed
// in this or another process. Safe for concurrent use.
type TextIndex struct {
	db     *DB
	load   textLoader
	tok    *search.Tokenizer
	syncMu sync.Mutex
	mark   walMark // the database's state at the last catch-up
	mu     sync.RWMutex
	last   int64
	spaces map[string]*search.TextSpace
}

// textDoc is one document of a text space.
type textDoc struct {
	id     int64
	fields []search.Field
}

// textLoader reads the documents of a space from the database: all of
// them when ids is nil, else those of ids that exist.
type textLoader func(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]textDoc, error)

func newTextIndex(db *DB, load textLoader) *TextIndex {
	return &TextIndex{db: db, load: load, tok: &search.Tokenizer{}, spaces: map[string]*search.TextSpace{}}
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

// Search returns the k best documents of space for the words of query by
// BM25 (any word may match; a repeated word counts each time), best first.
// allow, when not nil, restricts the result to those ids.
func (x *TextIndex) Search(ctx context.Context, space, query string, k int, allow []int64) ([]ScoredID, error) {
	return x.search(ctx, space, search.TextQuery{Terms: x.tok.Tokens(query, nil), K: k, Allow: allow})
}

// TextMatch is how one document matches a query: its BM25 score over all
// the query's words, and whether it holds a word of the query other than
// a stopword (search.Tokenizer.ContentTokens).
type TextMatch struct {
	Score   float64
	Content bool
}

// Match scores ids of space against query, in the order of ids (ids not
// in the space score 0 and match nothing). A hybrid search uses it for the
// keyword half of its semantic hits and for the relevance floor.
func (x *TextIndex) Match(ctx context.Context, space, query string, ids []int64) ([]TextMatch, error) {
	out := make([]TextMatch, len(ids))
	terms := x.tok.Tokens(query, nil)
	if len(terms) == 0 || len(ids) == 0 {
		return out, nil
	}
	if err := x.sync(ctx, space); err != nil {
		return nil, err
	}
	content := x.tok.ContentTokens(query, nil)
	x.mu.RLock()
	defer x.mu.RUnlock()
	sp := x.spaces[space]
	if sp == nil {
		return out, nil
	}
	scores, matched := sp.Score(terms, ids), sp.Score(content, ids)
	for i := range ids {
		out[i] = TextMatch{Score: scores[i], Content: matched[i] > 0}
	}
	return out, nil
}

// search runs q (its terms from x.tok) on space after catching up.
func (x *TextIndex) search(ctx context.Context, space string, q search.TextQuery) ([]ScoredID, error) {
	if len(q.Terms) == 0 || q.K <= 0 {
		return nil, nil
	}
	if err := x.sync(ctx, space); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	sp := x.spaces[space]
	if sp == nil {
		return nil, nil
	}
	return sp.Search(q), nil
}

// sync catches up with vector_log and loads the named spaces (see VectorIndex.sync).
func (x *TextIndex) sync(ctx context.Context, load ...string) error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	m := x.db.walMark(ctx)
	if x.mark.same(m) && loadedAll(x.spaces, load) {
		return nil // nothing committed since the last catch-up
	}
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
	fresh := map[string]*search.TextSpace{}
	for s := range reload {
		docs, err := x.load(ctx, tx, s, nil)
		if err != nil {
			return err
		}
		sp := search.NewTextSpace(x.tok)
		for _, d := range docs {
			sp.Add(d.id, d.fields...)
		}
		fresh[s] = sp
		delete(changed, s)
	}
	updates := map[string][]textDoc{}
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
			sp.Remove(id)
		}
		for _, d := range updates[s] {
			sp.Add(d.id, d.fields...)
		}
		sp.Compact()
	}
	x.last = maxSeq
	x.mark = m
	return nil
}
