package search

import "container/heap"

// topK keeps the k best (row, score) pairs in a min-heap.
type topK struct {
	k int
	h entryHeap
}

type entry struct {
	row   int32
	score float32
}

func newTopK(k int) topK { return topK{k: k, h: make(entryHeap, 0, k)} }

func (t *topK) offer(row int32, score float32) {
	if len(t.h) < t.k {
		heap.Push(&t.h, entry{row, score})
		return
	}
	if score > t.h[0].score {
		t.h[0] = entry{row, score}
		heap.Fix(&t.h, 0)
	}
}

type entryHeap []entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h entryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *entryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
