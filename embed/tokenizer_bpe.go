package embed

import "math"

// noRank marks a pair of parts that is not in the vocabulary.
const noRank = math.MaxInt

// longPiece is the length from which split uses a heap instead of the
// quadratic scan: a 100 KB run of letters without a space must not take
// minutes.
const longPiece = 128

// split appends to bounds the byte offsets that separate piece into its
// byte-pair-encoded tokens, starting with 0 and ending with len(piece). It
// merges the lowest-ranked adjacent pair first, leftmost on ties, exactly
// as tiktoken does.
func (t *tokenizer) split(piece string, bounds []int) []int {
	if len(piece) >= longPiece {
		return t.splitHeap(piece, bounds)
	}
	type part struct{ start, rank int }
	var stack [longPiece + 1]part
	parts := stack[:len(piece)+1]
	rankOf := func(a, b int) int {
		if r, ok := t.ranks[piece[a:b]]; ok {
			return r
		}
		return noRank
	}
	for i := range parts {
		parts[i] = part{i, noRank}
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rankOf(parts[i].start, parts[i+2].start)
	}
	for len(parts) > 1 {
		minRank, at := noRank, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < minRank {
				minRank, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		// parts[at+1] disappears; the pairs starting at at-1 and at change.
		if at+3 < len(parts) {
			parts[at].rank = rankOf(parts[at].start, parts[at+3].start)
		} else {
			parts[at].rank = noRank
		}
		if at > 0 {
			parts[at-1].rank = rankOf(parts[at-1].start, parts[at+2].start)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	for _, p := range parts {
		bounds = append(bounds, p.start)
	}
	return bounds
}

// splitHeap is split in O(n log n): parts form a linked list and candidate
// merges wait in a min-heap ordered by (rank, start), stale entries being
// skipped when popped.
func (t *tokenizer) splitHeap(piece string, bounds []int) []int {
	n := len(piece)
	next := make([]int, n+1) // next[i]: start of the part after the one at i
	prev := make([]int, n+1)
	alive := make([]bool, n+1)
	for i := 0; i <= n; i++ {
		next[i], prev[i], alive[i] = i+1, i-1, true
	}
	pairRank := func(i int) int {
		if i < 0 || i >= n {
			return noRank
		}
		j := next[i]
		if j >= n {
			return noRank
		}
		if r, ok := t.ranks[piece[i:next[j]]]; ok {
			return r
		}
		return noRank
	}
	h := mergeHeap{}
	cur := make([]int, n+1) // cur[i]: rank of the pair starting at i now
	for i := 0; i < n; i++ {
		cur[i] = pairRank(i)
		if cur[i] != noRank {
			h.push(mergeEntry{cur[i], i})
		}
	}
	for len(h) > 0 {
		e := h.pop()
		i := e.start
		if !alive[i] || cur[i] != e.rank || e.rank == noRank {
			continue
		}
		j := next[i]
		alive[j] = false
		next[i] = next[j]
		if next[j] <= n {
			prev[next[j]] = i
		}
		cur[i] = pairRank(i)
		if cur[i] != noRank {
			h.push(mergeEntry{cur[i], i})
		}
		if p := prev[i]; p >= 0 {
			cur[p] = pairRank(p)
			if cur[p] != noRank {
				h.push(mergeEntry{cur[p], p})
			}
		}
	}
	for i := 0; i <= n; i = next[i] {
		bounds = append(bounds, i)
	}
	return bounds
}

type mergeEntry struct{ rank, start int }

// mergeHeap is a binary min-heap of merge candidates.
type mergeHeap []mergeEntry

func (e mergeEntry) less(o mergeEntry) bool {
	return e.rank < o.rank || (e.rank == o.rank && e.start < o.start)
}

func (h *mergeHeap) push(e mergeEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *mergeHeap) pop() mergeEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].less(s[m]) {
			m = l
		}
		if r < len(s) && s[r].less(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
