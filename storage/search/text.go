package search

import (
	"math"
	"slices"
	"sort"
	"sync"
)

// BM25 parameters: the usual k1 and b, and the idf of Lucene and of
// Robertson/Sparck Jones with +1, ln(1+(N-n+0.5)/(n+0.5)). FTS5's bm25()
// drops the +1, which gives a word in half the documents or more no weight
// at all and underweights the frequent words of a narrow collection
// ("flow", "pressure" in aeronautics).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// tfUnit is how finely field weights are kept: term frequencies are stored
// as uint16 counts of quarter occurrences.
const tfUnit = 4

// ScoredID is an id with a score (higher is better).
type ScoredID struct {
	ID    int64
	Score float64
}

// Field is one part of a document. Each of its words counts Weight times
// in the document's term frequencies (as FTS5's column weights do: a title
// word weighs more than a description word); the document's length is its
// word count whatever the weights. Weight is rounded to a quarter; 0 means 1.
type Field struct {
	Text   string
	Weight float64
}

// TextQuery is a keyword search of a TextSpace.
type TextQuery struct {
	Terms []string // tokens of the query (Tokenizer.Tokens); a repeated term counts each time
	K     int      // how many results at most
	Allow []int64  // when not nil, only these ids can match
	All   bool     // every distinct term must occur in a result (else any)
}

// TextSpace is a BM25 index of one space's documents (a collection's
// chunks, an organization's listings): postings in memory, because FTS5's
// bm25() costs microseconds per matching row in a pure-Go SQLite (most of a
// second for a frequent word over 100,000 chunks) where postings answer in
// about a millisecond. Removed documents stay in the postings, skipped,
// until Compact drops them. Not safe for concurrent writes: callers hold a
// lock (searches may run together).
type TextSpace struct {
	tok      *Tokenizer
	ids      []int64
	pos      map[int64]int32
	lens     []uint32
	live     []bool
	post     map[string]*plist
	totalLen int64
	alive    int
	dead     int
	norms    *normCache
}

// normCache is the BM25 length norm of every row for one state of a space
// (length total and live count); searches running together share it.
type normCache struct {
	mu       sync.Mutex
	norm     []float64
	totalLen int64
	alive    int
}

// plist is the postings of one term: rows and their weighted frequencies.
type plist struct {
	docs []int32
	tfs  []uint16
}

// NewTextSpace returns an empty space whose documents are split by tok.
func NewTextSpace(tok *Tokenizer) *TextSpace {
	return &TextSpace{tok: tok, pos: map[int64]int32{}, post: map[string]*plist{}, norms: &normCache{}}
}

// Len is the number of live documents.
func (sp *TextSpace) Len() int { return sp.alive }

// Add indexes a document, replacing the one with the same id.
func (sp *TextSpace) Add(id int64, fields ...Field) {
	if _, ok := sp.pos[id]; ok {
		sp.Remove(id)
	}
	tf := map[string]int{}
	var n int
	var terms []string
	for _, f := range fields {
		terms = sp.tok.Tokens(f.Text, terms[:0])
		w := tfUnit
		if f.Weight != 0 {
			w = max(1, int(math.Round(f.Weight*tfUnit)))
		}
		for _, t := range terms {
			tf[t] += w
		}
		n += len(terms)
	}
	row := int32(len(sp.ids))
	sp.ids = append(sp.ids, id)
	sp.pos[id] = row
	sp.lens = append(sp.lens, uint32(n))
	sp.live = append(sp.live, true)
	sp.totalLen += int64(n)
	sp.alive++
	for t, c := range tf {
		p := sp.post[t]
		if p == nil {
			p = &plist{}
			sp.post[t] = p
		}
		p.docs = append(p.docs, row)
		p.tfs = append(p.tfs, uint16(min(c, math.MaxUint16)))
	}
}

// Remove drops a document; an unknown id is ignored. Document frequencies
// keep counting it until the next compaction (at most a fifth of the rows):
// a small idf error, and no text to re-read.
func (sp *TextSpace) Remove(id int64) {
	row, ok := sp.pos[id]
	if !ok {
		return
	}
	delete(sp.pos, id)
	sp.live[row] = false
	sp.totalLen -= int64(sp.lens[row])
	sp.alive--
	sp.dead++
}

// Compact rebuilds the postings once a fifth of the rows are dead (call it
// after a batch of changes); otherwise it does nothing.
func (sp *TextSpace) Compact() {
	if sp.dead*5 < len(sp.ids) || sp.dead == 0 {
		return
	}
	remap := make([]int32, len(sp.ids))
	n := NewTextSpace(sp.tok)
	for r, id := range sp.ids {
		remap[r] = -1
		if sp.live[r] {
			remap[r] = int32(len(n.ids))
			n.pos[id] = remap[r]
			n.ids = append(n.ids, id)
			n.lens = append(n.lens, sp.lens[r])
			n.live = append(n.live, true)
		}
	}
	for t, p := range sp.post {
		q := &plist{}
		for i, d := range p.docs {
			if remap[d] >= 0 {
				q.docs = append(q.docs, remap[d])
				q.tfs = append(q.tfs, p.tfs[i])
			}
		}
		if len(q.docs) > 0 {
			n.post[t] = q
		}
	}
	n.totalLen, n.alive = sp.totalLen, sp.alive
	*sp = *n
}

// Search scores the documents with BM25 and returns the K best, best first
// (ties by lower id).
//
// Any-word queries prune by MaxScore, exactly: terms go rarest first (by
// their largest possible contribution), and once the K-th best partial
// score is above what all remaining terms together could add, no new
// document can reach the top K, so the frequent terms (long postings,
// little weight) are only looked up for the documents still in the
// running instead of being walked whole.
func (sp *TextSpace) Search(q TextQuery) []ScoredID {
	if len(q.Terms) == 0 || q.K <= 0 || sp.alive == 0 {
		return nil
	}
	mult := map[string]int{}
	for _, t := range q.Terms {
		mult[t]++
	}
	n := float64(sp.alive)
	terms := make([]qterm, 0, len(mult))
	for t, m := range mult {
		p := sp.post[t]
		if p == nil {
			if q.All {
				return nil
			}
			continue
		}
		df := min(float64(len(p.docs)), n)
		w := float64(m) * math.Log(1+(n-df+0.5)/(df+0.5))
		terms = append(terms, qterm{text: t, p: p, w: w})
	}
	// Highest possible contribution first (tf/(tf+norm) < 1); a fixed order
	// also makes the float sums, hence ties, the same on every run.
	sort.Slice(terms, func(a, b int) bool {
		if terms[a].w != terms[b].w {
			return terms[a].w > terms[b].w
		}
		return terms[a].text < terms[b].text
	})
	sc := textScratchPool.Get().(*textScratch)
	defer sc.release()
	sc.reset(len(sp.ids), q.All)
	if q.Allow != nil {
		sc.allowBuf = grow(sc.allowBuf, len(sp.ids))
		clear(sc.allowBuf)
		sc.allowed = sc.allowBuf
		for _, id := range q.Allow {
			if r, ok := sp.pos[id]; ok {
				sc.allowed[r] = true
			}
		}
	}
	norm := sp.lengthNorms()
	rest := 0.0 // the most the terms not yet walked can add
	for _, t := range terms {
		rest += t.w * (bm25K1 + 1)
	}
	walked := 0
	var theta float32
	for _, t := range terms {
		if !q.All && walked > 0 && len(sc.touched) >= q.K {
			theta = sc.kth(q.K)
			if float32(rest*restMargin) < theta {
				break
			}
		}
		sp.walk(sc, t, norm)
		rest -= t.w * (bm25K1 + 1)
		walked++
	}
	if walked < len(terms) {
		sp.lookupRest(sc, terms[walked:], norm, float32(rest*restMargin), theta)
	}
	top := newTopK(q.K)
	for _, d := range sc.touched {
		if sc.found == nil || int(sc.found[d]) == len(mult) {
			top.offer(d, sc.scores[d])
		}
	}
	out := make([]ScoredID, 0, len(top.h))
	for _, e := range top.h {
		out = append(out, ScoredID{ID: sp.ids[e.row], Score: float64(e.score)})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].ID < out[b].ID
	})
	return out
}

// restMargin covers float32 rounding of the partial sums in the pruning
// bounds, so pruning never drops a document that could tie.
const restMargin = 1.0001

// qterm is a distinct query term with its weight (multiplicity times idf).
type qterm struct {
	text string
	p    *plist
	w    float64
}

// bm25 is one term's contribution for a weighted frequency and a
// document's length norm.
func bm25(w float64, tf uint16, norm float64) float32 {
	f := float64(tf) / tfUnit
	return float32(w * f * (bm25K1 + 1) / (f + norm))
}

// walk adds a term's contribution to every live, allowed document of its
// postings.
func (sp *TextSpace) walk(sc *textScratch, t qterm, norm []float64) {
	for i, d := range t.p.docs {
		if !sp.live[d] || (sc.allowed != nil && !sc.allowed[d]) {
			continue
		}
		if sc.scores[d] == 0 && (sc.found == nil || sc.found[d] == 0) {
			sc.touched = append(sc.touched, d)
		}
		if sc.found != nil {
			sc.found[d]++
		}
		sc.scores[d] += bm25(t.w, t.p.tfs[i], norm[d])
	}
}

// lookupRest adds the remaining terms to the documents that can still reach
// the top K (partial score + rest >= theta), finding each in the term's
// postings (sorted by row) by binary search; the others are dropped.
func (sp *TextSpace) lookupRest(sc *textScratch, terms []qterm, norm []float64, rest, theta float32) {
	keep := sc.touched[:0]
	for _, d := range sc.touched {
		if sc.scores[d]+rest >= theta {
			keep = append(keep, d)
		} else {
			sc.scores[d] = 0
		}
	}
	sc.touched = keep
	slices.Sort(keep)
	for _, t := range terms {
		docs := t.p.docs
		for _, d := range keep {
			j, ok := slices.BinarySearch(docs, d)
			docs = docs[j:]
			if ok && sp.live[d] {
				sc.scores[d] += bm25(t.w, t.p.tfs[len(t.p.docs)-len(docs)], norm[d])
			}
		}
	}
}

// lengthNorms is each row's BM25 length norm k1*(1-b+b*len/avgdl), computed once
// per state of the space (searches share it; writes change the state).
func (sp *TextSpace) lengthNorms() []float64 {
	c := sp.norms
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.norm) == len(sp.lens) && c.totalLen == sp.totalLen && c.alive == sp.alive {
		return c.norm
	}
	avgdl := float64(sp.totalLen) / float64(sp.alive)
	norm := make([]float64, len(sp.lens))
	for d, l := range sp.lens {
		norm[d] = bm25K1 * (1 - bm25B + bm25B*float64(l)/avgdl)
	}
	c.norm, c.totalLen, c.alive = norm, sp.totalLen, sp.alive
	return norm
}

// textScratch is one search's per-row state, pooled: scores stay all zero
// between searches (release clears only what was touched).
type textScratch struct {
	scores   []float32
	found    []uint16 // distinct terms found per row, for All
	allowed  []bool   // nil: every row
	touched  []int32
	allowBuf []bool
	heap     topK
}

var textScratchPool = sync.Pool{New: func() any { return new(textScratch) }}

func (sc *textScratch) reset(rows int, all bool) {
	if len(sc.scores) < rows {
		sc.scores = make([]float32, rows)
	}
	sc.found = nil
	if all {
		sc.found = make([]uint16, rows)
	}
	sc.allowed = nil
	sc.touched = sc.touched[:0]
}

func (sc *textScratch) release() {
	for _, d := range sc.touched {
		sc.scores[d] = 0
	}
	sc.touched = sc.touched[:0]
	textScratchPool.Put(sc)
}

// kth is the k-th best partial score so far (len(touched) >= k).
func (sc *textScratch) kth(k int) float32 {
	if sc.heap.k != k {
		sc.heap = newTopK(k)
	}
	sc.heap.h = sc.heap.h[:0]
	for _, d := range sc.touched {
		sc.heap.offer(d, sc.scores[d])
	}
	return sc.heap.h[0].score
}

// Score returns the BM25 score of each of ids for terms (0 for an id that
// holds none of them or is not in the space), scored as Search would: the
// other half of a hybrid search asks for the keyword score of its semantic
// hits without ranking the whole space again.
func (sp *TextSpace) Score(terms []string, ids []int64) []float64 {
	out := make([]float64, len(ids))
	if len(terms) == 0 || sp.alive == 0 {
		return out
	}
	mult := map[string]int{}
	for _, t := range terms {
		mult[t]++
	}
	n := float64(sp.alive)
	norm := sp.lengthNorms()
	for t, m := range mult {
		p := sp.post[t]
		if p == nil {
			continue
		}
		df := min(float64(len(p.docs)), n)
		w := float64(m) * math.Log(1+(n-df+0.5)/(df+0.5))
		for i, id := range ids {
			row, ok := sp.pos[id]
			if !ok {
				continue
			}
			// Rows are appended in order, so postings are sorted by row.
			j := sort.Search(len(p.docs), func(j int) bool { return p.docs[j] >= row })
			if j == len(p.docs) || p.docs[j] != row {
				continue
			}
			out[i] += float64(bm25(w, p.tfs[j], norm[row]))
		}
	}
	return out
}
