package search

import (
	"context"
	"database/sql"
)

// TextIndex is the in-memory mirror of one feature's searchable text: a
// TextSpace (BM25) per space. Like VectorIndex it is a mirror: the
// database (the text itself) stays the source of truth, spaces load on
// first use, and the change log (an indexed item's change is logged in the
// transaction that writes it) tells it what changed in this or another
// process. Safe for concurrent use.
type TextIndex struct {
	m   *mirror[*TextSpace, TextDoc]
	tok *Tokenizer
}

// NewTextIndex returns an empty mirror of the text load reads, following
// log; spaces load lazily.
func NewTextIndex(log ChangeLog, load TextLoader) *TextIndex {
	tok := &Tokenizer{}
	loadSpace := func(ctx context.Context, tx *sql.Tx, space string) (*TextSpace, error) {
		docs, err := load(ctx, tx, space, nil)
		if err != nil {
			return nil, err
		}
		sp := NewTextSpace(tok)
		for _, d := range docs {
			sp.Add(d.ID, d.Fields...)
		}
		return sp, nil
	}
	return &TextIndex{tok: tok, m: &mirror[*TextSpace, TextDoc]{log: log, loadSpace: loadSpace, readItems: load,
		apply: putDocs, spaces: map[string]*TextSpace{}}}
}

// putDocs replaces the changed documents of sp by their current text.
func putDocs(sp *TextSpace, changed []int64, docs []TextDoc) {
	for _, id := range changed {
		sp.Remove(id)
	}
	for _, d := range docs {
		sp.Add(d.ID, d.Fields...)
	}
	sp.Compact()
}

// Tokens are the search terms of text, as the index tokenizes documents.
func (x *TextIndex) Tokens(text string) []string { return x.tok.Tokens(text, nil) }

// Warm loads every space whose name starts with prefix.
func (x *TextIndex) Warm(ctx context.Context, prefix string) error { return x.m.warm(ctx, prefix) }

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
	if err := x.m.sync(ctx, space); err != nil {
		return nil, err
	}
	content := x.tok.ContentTokens(query, nil)
	x.m.mu.RLock()
	defer x.m.mu.RUnlock()
	sp := x.m.spaces[space]
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
	if err := x.m.sync(ctx, space); err != nil {
		return nil, err
	}
	x.m.mu.RLock()
	defer x.m.mu.RUnlock()
	sp := x.m.spaces[space]
	if sp == nil {
		return nil, nil
	}
	return sp.Search(q), nil
}
