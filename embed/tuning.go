package embed

import (
	"math"

	"github.com/agentd/agentd/storage/search"
)

// SearchTuning is how far hybrid search trusts an embedder: Alpha is the
// weight of the semantic half in the fusion (0 keyword only, 1 semantic
// only), MinSimilarity the cosine below which a hit that holds none of the
// query's words is not returned (the relevance floor). They belong to the
// embedder because they measure it: a lexical embedder adds little to
// BM25, a real model a lot, and each model spreads its cosines its own way.
type SearchTuning struct {
	Alpha         float64
	MinSimilarity float64
}

// ExternalTuning is the tuning of an embedder that does not give its own
// (an external model): trust the semantic half more than the keyword half.
// No real model can run here, so these are chosen by that rule and checked
// with a synthetic strong embedder (app/kb eval_test.go), not measured on a
// real model; the evaluation prints the figures to calibrate one.
var ExternalTuning = SearchTuning{Alpha: 0.7, MinSimilarity: 0.35}

// tuned is implemented by embedders that know their own tuning.
type tuned interface{ SearchTuning() SearchTuning }

// TuningOf is e's search tuning: its own, else ExternalTuning.
func TuningOf(e Embedder) SearchTuning {
	if t, ok := e.(tuned); ok {
		return t.SearchTuning()
	}
	return ExternalTuning
}

// Floor applies the relevance floor to a hybrid search's candidates (ids
// in rank order, their cosines where known and their keyword matches in
// ids' order): a candidate that holds none of the query's words is kept
// only when its cosine reaches MinSimilarity (a negative one keeps all).
func (t SearchTuning) Floor(ids []int64, cos map[int64]float64, match []search.TextMatch) []search.Candidate {
	floor := t.MinSimilarity
	if floor < 0 {
		floor = math.Inf(-1)
	}
	out := make([]search.Candidate, 0, len(ids))
	for i, id := range ids {
		c, ok := cos[id]
		if !match[i].Content && (!ok || c < floor) {
			continue
		}
		out = append(out, search.Candidate{ID: id, Keyword: match[i].Score, Semantic: c})
	}
	return out
}
