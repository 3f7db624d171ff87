package search

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestTokenizer(t *testing.T) {
	var tok Tokenizer
	got := tok.Tokens(`Sofas, "heating" NEAR(col:x* 3D-Drucker Ünïcode_ok 🙂`, nil)
	want := []string{"sofa", "heat", "near", "col", "x", "3d", "drucker", "ünïcode", "ok"}
	if !slices.Equal(got, want) {
		t.Fatalf("tokens %q, want %q", got, want)
	}
	if got := tok.Tokens("Sofas", nil); !slices.Equal(got, []string{"sofa"}) { // from the cache
		t.Fatalf("cached %q", got)
	}
}

func TestTextSpaceCompaction(t *testing.T) {
	sp := NewTextSpace(&Tokenizer{})
	for i := range 100 {
		sp.Add(int64(i), Field{Text: "common word"})
	}
	sp.Add(1000, Field{Text: "rare word"})
	for i := range 50 {
		sp.Remove(int64(i))
	}
	sp.Compact()
	if sp.dead != 0 || len(sp.ids) != 51 || len(sp.post["common"].docs) != 50 {
		t.Fatalf("after compaction: dead %d ids %d", sp.dead, len(sp.ids))
	}
	hits := sp.Search(TextQuery{Terms: []string{"rare"}, K: 3})
	if len(hits) != 1 || hits[0].ID != 1000 {
		t.Fatalf("hits %v", hits)
	}
}

func ids(hits []ScoredID) []int64 {
	var out []int64
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

// Any word matches by default, every word with All; allow restricts; a
// heavier field ranks its words higher; Add replaces.
func TestTextSpaceSearch(t *testing.T) {
	tok := &Tokenizer{}
	sp := NewTextSpace(tok)
	sp.Add(1, Field{Text: "red velvet sofa", Weight: 4}, Field{Text: "a chair for the garden"})
	sp.Add(2, Field{Text: "garden chair", Weight: 4}, Field{Text: "red paint"})
	sp.Add(3, Field{Text: "lamp", Weight: 4}, Field{Text: "reading light"})
	q := func(text string, all bool, allow []int64) []int64 {
		return ids(sp.Search(TextQuery{Terms: tok.Tokens(text, nil), K: 10, All: all, Allow: allow}))
	}
	if got := q("garden chair", false, nil); !slices.Equal(got, []int64{2, 1}) {
		t.Fatalf("title weight: %v", got)
	}
	if got := q("velvet chair", false, nil); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("any word: %v", got)
	}
	if got := q("velvet chairs", true, nil); !slices.Equal(got, []int64{1}) {
		t.Fatalf("all words: %v", got)
	}
	if got := q("velvet piano", true, nil); len(got) != 0 {
		t.Fatalf("all words, one unknown: %v", got)
	}
	if got := q("red", false, []int64{2, 3, 42}); !slices.Equal(got, []int64{2}) {
		t.Fatalf("allow: %v", got)
	}
	sp.Add(1, Field{Text: "piano"})
	if got := q("velvet", false, nil); len(got) != 0 || sp.Len() != 3 {
		t.Fatalf("replaced document still found: %v (len %d)", got, sp.Len())
	}
	if got := q("", false, nil); got != nil {
		t.Fatalf("empty query: %v", got)
	}
}

// A weight of 1 scores exactly like an unweighted field.
func TestTextSpaceUnitWeight(t *testing.T) {
	tok := &Tokenizer{}
	a, b := NewTextSpace(tok), NewTextSpace(tok)
	for i, s := range []string{"flow over a flat plate", "pressure flow flow", "heat"} {
		a.Add(int64(i), Field{Text: s})
		b.Add(int64(i), Field{Text: s, Weight: 1})
	}
	qa := a.Search(TextQuery{Terms: tok.Tokens("flow pressure", nil), K: 5})
	qb := b.Search(TextQuery{Terms: tok.Tokens("flow pressure", nil), K: 5})
	if !slices.Equal(qa, qb) || len(qa) != 2 || qa[0].ID != 1 {
		t.Fatalf("%v vs %v", qa, qb)
	}
}

// MaxScore pruning returns exactly what scoring every posting returns, on
// a Zipf corpus (frequent terms are the ones pruned), with and without an
// allow list, after removals.
func TestTextSpacePruningIsExact(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	z := rand.NewZipf(r, 1.1, 2, 2000)
	word := func() string { return fmt.Sprintf("w%d", z.Uint64()) }
	tok := &Tokenizer{}
	sp := NewTextSpace(tok)
	for i := range 3000 {
		words := make([]string, 5+r.Intn(60))
		for j := range words {
			words[j] = word()
		}
		sp.Add(int64(i), Field{Text: strings.Join(words, " ")})
	}
	for i := range 300 {
		sp.Remove(int64(i * 9))
	}
	var allow []int64
	for i := range 3000 {
		if i%3 == 0 {
			allow = append(allow, int64(i))
		}
	}
	for qi := range 300 {
		terms := make([]string, 1+r.Intn(5))
		for j := range terms {
			terms[j] = tok.Tokens(word(), nil)[0]
		}
		q := TextQuery{Terms: terms, K: []int{1, 5, 10, 40}[qi%4]}
		if qi%5 == 0 {
			q.Allow = allow
		}
		got, want := sp.Search(q), exhaustiveBM25(sp, q)
		if !sameRanking(got, want) {
			t.Fatalf("query %v k %d:\n got %v\nwant %v", terms, q.K, got, want)
		}
	}
}

// sameRanking: the same scores in the same order, and the same ids except
// among those tied with the last one (which of them makes the cut is the
// top-k heap's business).
func sameRanking(got, want []ScoredID) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Score != want[i].Score || (got[i].ID != want[i].ID && got[i].Score != want[len(want)-1].Score) {
			return false
		}
	}
	return true
}

// exhaustiveBM25 scores every posting of every term (in Search's term
// order, so float sums agree bit for bit) and sorts everything.
func exhaustiveBM25(sp *TextSpace, q TextQuery) []ScoredID {
	mult := map[string]int{}
	for _, t := range q.Terms {
		mult[t]++
	}
	n := float64(sp.alive)
	var terms []qterm
	for t, m := range mult {
		if p := sp.post[t]; p != nil {
			df := min(float64(len(p.docs)), n)
			terms = append(terms, qterm{text: t, p: p, w: float64(m) * math.Log(1+(n-df+0.5)/(df+0.5))})
		}
	}
	sort.Slice(terms, func(a, b int) bool {
		if terms[a].w != terms[b].w {
			return terms[a].w > terms[b].w
		}
		return terms[a].text < terms[b].text
	})
	allowed := map[int64]bool{}
	for _, id := range q.Allow {
		allowed[id] = true
	}
	scores := map[int32]float32{}
	norm := sp.lengthNorms()
	for _, t := range terms {
		for i, d := range t.p.docs {
			if sp.live[d] && (q.Allow == nil || allowed[sp.ids[d]]) {
				scores[d] += bm25(t.w, t.p.tfs[i], norm[d])
			}
		}
	}
	var out []ScoredID
	for d, s := range scores {
		out = append(out, ScoredID{ID: sp.ids[d], Score: float64(s)})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].ID < out[b].ID
	})
	if len(out) > q.K {
		out = out[:q.K]
	}
	if out == nil {
		out = []ScoredID{}
	}
	return out
}

// ContentTokens drops stopwords, unless the text has nothing else.
func TestContentTokens(t *testing.T) {
	var tok Tokenizer
	if got := tok.ContentTokens("What is the Heating of wings?", nil); !slices.Equal(got, []string{"heat", "wing"}) {
		t.Fatalf("content tokens %q", got)
	}
	if got := tok.ContentTokens("what is it", nil); !slices.Equal(got, []string{"what", "is", "it"}) {
		t.Fatalf("stopwords only %q", got)
	}
}

// Score gives the same BM25 as Search, for the asked ids only, in their
// order, after removals and re-adds.
func TestTextSpaceScore(t *testing.T) {
	tok := &Tokenizer{}
	sp := NewTextSpace(tok)
	sp.Add(1, Field{Text: "wing flutter at high speed"})
	sp.Add(2, Field{Text: "the wing"})
	sp.Add(3, Field{Text: "boundary layer"})
	sp.Add(4, Field{Text: "gone wing"})
	sp.Remove(4)
	sp.Add(2, Field{Text: "the wing and the flutter"}) // a re-add moves 2 to a new row
	terms := tok.Tokens("wing flutter", nil)
	hits := sp.Search(TextQuery{Terms: terms, K: 10})
	got := sp.Score(terms, []int64{3, 2, 4, 1, 99})
	if got[0] != 0 || got[2] != 0 || got[4] != 0 {
		t.Fatalf("non-matching ids scored: %v", got)
	}
	want := map[int64]float64{}
	for _, h := range hits {
		want[h.ID] = h.Score
	}
	for i, id := range []int64{2, 1} {
		if s := got[i*2+1]; math.Abs(s-want[id]) > 1e-5 {
			t.Fatalf("id %d: Score %v, Search %v", id, s, want[id])
		}
	}
}
