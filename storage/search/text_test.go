package search

import (
	"slices"
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
