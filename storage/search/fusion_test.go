package search

import (
	"math"
	"slices"
	"testing"
)

// Ties keep the order of first appearance; the score sums 1/(k+rank).
func TestFuseRRF(t *testing.T) {
	got := FuseRRF(RRFK, []int64{1, 2, 3}, []int64{2, 1, 4})
	if !slices.Equal(func() []int64 {
		var out []int64
		for _, f := range got {
			out = append(out, f.ID)
		}
		return out
	}(), []int64{1, 2, 3, 4}) {
		t.Fatalf("order %v", got)
	}
	if want := 1.0/61 + 1.0/62; math.Abs(got[0].Score-want) > 1e-15 {
		t.Fatalf("score %v, want %v", got[0].Score, want)
	}
}
