package search

import "sort"

// Fused is one item of a fused ranking.
type Fused struct {
	ID    int64
	Score float64 // the fused score, higher is better
}

// Candidate is one item of a hybrid search with the scores of both halves:
// its BM25 score (0 when no query word occurs in it) and its cosine
// similarity to the query embedding.
type Candidate struct {
	ID       int64
	Keyword  float64
	Semantic float64
}

// FuseScores ranks candidates by a convex combination of their normalised
// scores, alpha x semantic + (1-alpha) x keyword, each half divided by its
// best score among the candidates (so the best keyword and the best semantic
// match both score 1; a half with no positive score adds nothing). alpha is
// how much the semantic half is trusted, from 0 (keyword only) to 1
// (semantic only). Unlike reciprocal rank fusion it keeps how far apart two
// hits are, so a strong keyword match is not pulled level with a weak
// semantic one; the evaluation (app/kb eval_test.go) measured it ahead of
// weighted RRF on every collection and embedder at the chosen weights.
// Ties keep the candidates' order, so the result is deterministic.
func FuseScores(cands []Candidate, alpha float64) []Fused {
	alpha = min(1, max(0, alpha))
	var kmax, smax float64
	for _, c := range cands {
		kmax = max(kmax, c.Keyword)
		smax = max(smax, c.Semantic)
	}
	out := make([]Fused, len(cands))
	for i, c := range cands {
		var s float64
		if kmax > 0 {
			s += (1 - alpha) * c.Keyword / kmax
		}
		if smax > 0 {
			s += alpha * c.Semantic / smax
		}
		out[i] = Fused{ID: c.ID, Score: s}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Score > out[b].Score })
	return out
}
