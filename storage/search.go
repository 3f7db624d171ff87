package storage

import (
	"sort"
	"strings"
	"unicode"
)

// Generic pieces of hybrid search, shared by the knowledge base and
// listings: a safe FTS5 query from user text and reciprocal rank fusion.

// maxMatchTerms bounds the terms of a full-text query (cost of an OR query
// grows with its terms).
const maxMatchTerms = 64

// MatchQuery turns free user text into an FTS5 MATCH expression that can
// never be a syntax error: every run of letters and digits becomes a quoted
// term and the terms are OR-ed, so ranking is plain BM25 over the query's
// words (a repeated word counts each time, as in BM25). Operators, quotes,
// '*', NEAR( and column filters in the text are just punctuation. Text
// without a word gives "".
func MatchQuery(text string) string { return matchExpr(matchTerms(text)) }

// matchTerms splits user text into lowercased runs of letters and digits
// (at most maxMatchTerms).
func matchTerms(text string) []string {
	terms := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	if len(terms) > maxMatchTerms {
		terms = terms[:maxMatchTerms]
	}
	return terms
}

// matchExpr ORs the terms, each quoted (so none is an FTS5 operator).
func matchExpr(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + t + `"`
	}
	return strings.Join(q, " OR ")
}

// Fused is one item of a fused ranking.
type Fused struct {
	ID    int64
	Score float64 // sum over lists of 1/(k + rank), rank from 1
}

// RRFK is the usual reciprocal rank fusion constant (Cormack et al. 2009).
const RRFK = 60

// FuseRRF merges ranked id lists (best first) by reciprocal rank fusion:
// an item scores sum(1/(k+rank)) over the lists it appears in. Ties keep
// the order of first appearance in the earlier list, so the result is
// deterministic.
func FuseRRF(k float64, lists ...[]int64) []Fused {
	score := map[int64]float64{}
	order := map[int64]int{}
	for _, l := range lists {
		for r, id := range l {
			if _, ok := order[id]; !ok {
				order[id] = len(order)
			}
			score[id] += 1 / (k + float64(r+1))
		}
	}
	out := make([]Fused, 0, len(score))
	for id, s := range score {
		out = append(out, Fused{ID: id, Score: s})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return order[out[a].ID] < order[out[b].ID]
	})
	return out
}
