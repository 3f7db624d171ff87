package search

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Tokenizer is the one definition of a word for keyword search: a run of
// letters and digits, lowercased, stemmed with Snowball English ("sofas"
// finds "sofa", "heating" finds "heat"). Query and document text go through
// the same Tokenizer, so anything else (quotes, operators, '*', column
// syntax) is just punctuation. It caches stems (words are Zipf-distributed,
// so a bounded cache catches nearly every occurrence). The zero value is
// ready; safe for concurrent use.
type Tokenizer struct {
	m sync.Map
	n atomic.Int64
}

// stemCacheMax bounds the stem cache.
const stemCacheMax = 200_000

// maxStemLen is the longest word that is stemmed (longer runs are ids,
// hashes or noise: kept as they are).
const maxStemLen = 64

// isWordRune reports whether r belongs to a word.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// Tokens appends the words of text, stemmed, to dst.
func (t *Tokenizer) Tokens(text string, dst []string) []string {
	for _, w := range words(text) {
		dst = append(dst, t.stem(w))
	}
	return dst
}

// ContentTokens appends the words of text that carry meaning (not English
// stopwords), stemmed, to dst; a text of stopwords only gives all of them.
// A hit that holds only "the" or "of" of a query has not matched it: this
// is what a keyword match means to the relevance floor.
func (t *Tokenizer) ContentTokens(text string, dst []string) []string {
	ws := words(text)
	n := len(dst)
	for _, w := range ws {
		if !english.IsStopWord(w) {
			dst = append(dst, t.stem(w))
		}
	}
	if len(dst) == n {
		for _, w := range ws {
			dst = append(dst, t.stem(w))
		}
	}
	return dst
}

// words splits text into lowercase words.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !isWordRune(r) })
}

// stem is the cached stem of a lowercase word.
func (t *Tokenizer) stem(w string) string {
	if s, ok := t.m.Load(w); ok {
		return s.(string)
	}
	s := w
	if len(w) <= maxStemLen {
		s = english.Stem(w, false)
	}
	if t.n.Load() < stemCacheMax {
		t.m.Store(w, s)
		t.n.Add(1)
	}
	return s
}
