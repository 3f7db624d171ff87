package search

import (
	"math"
	"sort"
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
}

// plist is the postings of one term: rows and their weighted frequencies.
type plist struct {
	docs []int32
	tfs  []uint16
}

// NewTextSpace returns an empty space whose documents are split by tok.
func NewTextSpace(tok *Tokenizer) *TextSpace {
	return &TextSpace{tok: tok, pos: map[int64]int32{}, post: map[string]*plist{}}
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
func (sp *TextSpace) Search(q TextQuery) []ScoredID {
	if len(q.Terms) == 0 || q.K <= 0 || sp.alive == 0 {
		return nil
	}
	var allowed []bool
	if q.Allow != nil {
		allowed = make([]bool, len(sp.ids))
		for _, id := range q.Allow {
			if r, ok := sp.pos[id]; ok {
				allowed[r] = true
			}
		}
	}
	mult := map[string]int{}
	for _, t := range q.Terms {
		mult[t]++
	}
	var found []uint16 // distinct terms found per row, for All
	if q.All {
		for t := range mult {
			if sp.post[t] == nil {
				return nil
			}
		}
		found = make([]uint16, len(sp.ids))
	}
	n := float64(sp.alive)
	avgdl := float64(sp.totalLen) / n
	scores := make([]float32, len(sp.ids))
	var touched []int32
	for t, m := range mult {
		p := sp.post[t]
		if p == nil {
			continue
		}
		df := min(float64(len(p.docs)), n)
		w := float64(m) * math.Log(1+(n-df+0.5)/(df+0.5))
		for i, d := range p.docs {
			if !sp.live[d] || (allowed != nil && !allowed[d]) {
				continue
			}
			tf := float64(p.tfs[i]) / tfUnit
			if scores[d] == 0 && (found == nil || found[d] == 0) {
				touched = append(touched, d)
			}
			if found != nil {
				found[d]++
			}
			scores[d] += float32(w * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(sp.lens[d])/avgdl)))
		}
	}
	top := newTopK(q.K)
	for _, d := range touched {
		if found == nil || int(found[d]) == len(mult) {
			top.offer(d, scores[d])
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
