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
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !isWordRune(r) }) {
		if s, ok := t.m.Load(w); ok {
			dst = append(dst, s.(string))
			continue
		}
		s := w
		if len(w) <= maxStemLen {
			s = english.Stem(w, false)
		}
		if t.n.Load() < stemCacheMax {
			t.m.Store(w, s)
			t.n.Add(1)
		}
		dst = append(dst, s)
	}
	return dst
}
