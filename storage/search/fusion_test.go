package search

import (
	"math"
	"slices"
	"testing"
)

func fusedIDs(fs []Fused) []int64 {
	var out []int64
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

// Each half is divided by its best score, then mixed by alpha; ties keep
// the candidates' order.
func TestFuseScores(t *testing.T) {
	cands := []Candidate{
		{ID: 1, Keyword: 10, Semantic: 0.2},
		{ID: 2, Keyword: 5, Semantic: 0.4},
		{ID: 3, Keyword: 0, Semantic: 0.3},
		{ID: 4, Keyword: 5, Semantic: 0.4},
	}
	for _, tc := range []struct {
		alpha float64
		want  []int64
	}{
		{0, []int64{1, 2, 4, 3}},
		{1, []int64{2, 4, 3, 1}},
		// 1: 0.5x1 + 0.5x0.5; 2 and 4: 0.5x0.5 + 0.5x1; 3: 0.5x0.75.
		{0.5, []int64{1, 2, 4, 3}},
	} {
		got := FuseScores(cands, tc.alpha)
		if !slices.Equal(fusedIDs(got), tc.want) {
			t.Fatalf("alpha %v: %v, want %v", tc.alpha, fusedIDs(got), tc.want)
		}
		if tc.alpha == 0.5 && math.Abs(got[0].Score-0.75) > 1e-12 {
			t.Fatalf("alpha 0.5: score %v, want 0.75", got[0].Score)
		}
	}
	// A half with no positive score adds nothing; alpha is clamped.
	got := FuseScores([]Candidate{{ID: 7, Keyword: 2}, {ID: 8, Keyword: 4}}, 2)
	if !slices.Equal(fusedIDs(got), []int64{7, 8}) || got[0].Score != 0 {
		t.Fatalf("no semantic scores, alpha 2: %v", got)
	}
}
