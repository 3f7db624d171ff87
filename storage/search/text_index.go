package search

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// TextIndex is the in-memory mirror of one feature's searchable text: a
// TextSpace (BM25) per space. Like VectorIndex it is a mirror: the
// database (the text itself) stays the source of truth, spaces load on
// first use, and the change log (an indexed item's change is logged in the
// transaction that writes it) tells it what changed in this or another
// process. Safe for concurrent use.
type TextIndex struct {
	log    ChangeLog
	load   TextLoader
	tok    *Tokenizer
	syncMu sync.Mutex
	mark   Mark // the database's state at the last catch-up
	mu     sync.RWMutex
	last   int64
	spaces map[string]*TextSpace
}

// NewTextIndex returns an empty mirror of the text load reads, following
// log; spaces load lazily.
func NewTextIndex(log ChangeLog, load TextLoader) *TextIndex {
	return &TextIndex{log: log, load: load, tok: &Tokenizer{}, spaces: map[string]*TextSpace{}}
}

// Tokens are the search terms of text, as the index tokenizes documents.
func (x *TextIndex) Tokens(text string) []string { return x.tok.Tokens(text, nil) }

// Warm loads every space whose name starts with prefix.
func (x *TextIndex) Warm(ctx context.Context, prefix string) error {
	names, err := x.log.Spaces(ctx, prefix)
	if err != nil {
		return err
	}
	return x.sync(ctx, names...)
}

// Search returns the k best documents of space for the words of query by
// BM25 (any word may match; a repeated word counts each time), best first.
// allow, when not nil, restricts the result to those ids.
func (x *TextIndex) Search(ctx context.Context, space, query string, k int, allow []int64) ([]ScoredID, error) {
	return x.Query(ctx, space, TextQuery{Terms: x.tok.Tokens(query, nil), K: k, Allow: allow})
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

// Query runs q (its terms from Tokens) on space after catching up.
func (x *TextIndex) Query(ctx context.Context, space string, q TextQuery) ([]ScoredID, error) {
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

// sync catches up with the change log and loads the named spaces (see
// VectorIndex.sync).
func (x *TextIndex) sync(ctx context.Context, load ...string) error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	m := x.log.Mark(ctx)
	if x.mark.same(m) && loadedAll(x.spaces, load) {
		return nil // nothing committed since the last catch-up
	}
	var (
		fresh   map[string]*TextSpace
		changed map[string][]int64
		updates map[string][]TextDoc
		maxSeq  int64
	)
	have := func(s string) bool { _, ok := x.spaces[s]; return ok }
	err := x.log.Changes(ctx, x.last, have, len(x.spaces) > 0, load, func(tx *sql.Tx, d Delta) error {
		if d.ReloadAll {
			for s := range x.spaces {
				d.Reload[s] = true
			}
		}
		changed, maxSeq = d.Changed, d.MaxSeq
		fresh = map[string]*TextSpace{}
		for s := range d.Reload {
			docs, err := x.load(ctx, tx, s, nil)
			if err != nil {
				return err
			}
			sp := NewTextSpace(x.tok)
			for _, d := range docs {
				sp.Add(d.ID, d.Fields...)
			}
			fresh[s] = sp
			delete(changed, s)
		}
		updates = map[string][]TextDoc{}
		for s, ids := range changed {
			docs, err := x.load(ctx, tx, s, ids)
			if err != nil {
				return err
			}
			updates[s] = docs
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("text sync: %w", err)
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
			sp.Add(d.ID, d.Fields...)
		}
		sp.Compact()
	}
	x.last = maxSeq
	x.mark = m
	return nil
}
