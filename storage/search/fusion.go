package search

import "sort"

// Fused is one item of a fused ranking.
type Fused struct {
	ID    int64
	Score float64 // sum over lists of 1/(k + rank), rank from 1
}

// RRFK is the usual reciprocal rank fusion constant (Cormack et al. 2009).
const RRFK = 60

// FuseRRF merges ranked id lists (best first) by reciprocal rank fusion:
// an item scores sum(1/(k+rank)) over the lists it appears in. It needs no
// score calibration between a BM25 and a cosine ranking, which is why both
// knowledge and listing search fuse with it. Ties keep the order of first
// appearance (earlier list first), so the result is deterministic.
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
