package search

// topK keeps the k best (row, score) pairs in a min-heap (the worst kept
// pair at h[0], so most offers are one comparison).
type topK struct {
	k int
	h []entry
}

type entry struct {
	row   int32
	score float32
}

func newTopK(k int) topK { return topK{k: k, h: make([]entry, 0, k)} }

func (t *topK) offer(row int32, score float32) {
	h := t.h
	if len(h) < t.k {
		h = append(h, entry{row, score})
		for i := len(h) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if h[p].score <= h[i].score {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		t.h = h
		return
	}
	if len(h) == 0 || score <= h[0].score {
		return
	}
	h[0] = entry{row, score}
	for i := 0; ; { // sift down
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].score < h[l].score {
			m = r
		}
		if h[i].score <= h[m].score {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
