package embed

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// DefaultBuiltinDims is the vector length of the built-in embedder.
const DefaultBuiltinDims = 1024

// stopWeight is the weight of an English stopword relative to a rare
// content word: they carry little meaning, but dropping them entirely
// measured slightly worse (eval_test.go).
const stopWeight = 0.1

// Builtin is the default embedder: offline, deterministic and lexical. It
// hashes Snowball-stemmed words into a fixed number of signed dimensions
// (FNV-1a), weighting each by 1+ln(tf) times a static rarity prior, then
// L2-normalises. It knows no synonyms: no model weights can be installed
// here, so "car" and "automobile" are unrelated to it; hybrid search pairs
// it with BM25.
//
// The rarity prior stands in for IDF, which an embedder without corpus
// statistics cannot have: cl100k_base merged frequent words into single
// tokens early, so a word's BPE rank orders words by frequency in a large
// general corpus. weight = clamp(ln(rank)/ln(100256), 0.1, 1), and 1 for
// words that are not one token (rare by construction).
type Builtin struct {
	dims       int
	stopWeight float64
	tok        *tokenizer
	words      sync.Map // lowercase word -> wordInfo, at most wordCacheMax
	size       int64
	mu         sync.Mutex
}

// wordInfo is the cached stem and prior weight of a word.
type wordInfo struct {
	stem   string
	weight float64
}

// wordCacheMax bounds the word cache (words are Zipf-distributed, so a
// small cache catches nearly every occurrence).
const wordCacheMax = 200_000

// NewBuiltin returns a built-in embedder of dims dimensions (at least 64).
func NewBuiltin(dims int) (*Builtin, error) {
	if dims < 64 || dims > 65536 {
		return nil, fmt.Errorf("builtin embedder: %d dimensions, want 64 to 65536", dims)
	}
	tok, err := loadTokenizer()
	if err != nil {
		return nil, fmt.Errorf("builtin embedder: %w", err)
	}
	return &Builtin{dims: dims, stopWeight: stopWeight, tok: tok}, nil
}

// Name is "builtin".
func (b *Builtin) Name() string { return "builtin" }

// Model names the feature set; it changes whenever the features do, so the
// index is rebuilt.
func (b *Builtin) Model() string { return "fhash-v1" }

// Dimensions is the vector length.
func (b *Builtin) Dimensions() int { return b.dims }

// BuiltinTuning is the built-in embedder's search tuning, chosen on the
// evaluation collections (README "Search quality"): being lexical, it adds
// a little to BM25 at a low weight, and a hit of it that shares no word
// with the query is a hash collision unless its cosine is high.
var BuiltinTuning = SearchTuning{Alpha: 0.15, MinSimilarity: 0.6}

// SearchTuning is BuiltinTuning.
func (b *Builtin) SearchTuning() SearchTuning { return BuiltinTuning }

// Embed returns one unit vector per text (all zeros for a text without
// words). It never fails except on a cancelled context.
func (b *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	counts := bag{}
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(counts)
		b.features(t, counts)
		out[i] = b.vector(counts)
	}
	return out, nil
}

// Feature kinds, kept in the top byte of a feature key.
const (
	kindWord   = 'w' // stemmed content word
	kindStop   = 's' // stopword
	kindCJK    = 'c' // CJK character bigram
	kindShift  = 56  // the kind sits in the top byte of a feature key
	kindMask   = uint64(0xff) << kindShift
	hashOffset = uint64(14695981039346656037)
	hashPrime  = uint64(1099511628211)
)

// features counts the features of text into counts, keyed by kind (top
// byte) and a 56-bit FNV-1a hash of the feature's text.
func (b *Builtin) features(text string, counts bag) {
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		j := i + n
		cjk := isCJK(r)
		for j < len(text) {
			r2, n2 := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r2) || isCJK(r2) != cjk {
				break
			}
			j += n2
		}
		if cjk {
			addCJK(text[i:j], counts)
			i = j
			continue
		}
		word := lower(text[i:j])
		i = j
		if english.IsStopWord(word) {
			counts.add(key(kindStop, word), b.stopWeight)
			continue
		}
		info := b.word(word)
		counts.add(key(kindWord, info.stem), info.weight)
	}
}

// bag holds the features of one text: occurrences and weight of each.
type bag map[uint64]struct{ tf, w float32 }

func (m bag) add(k uint64, w float64) {
	f := m[k]
	f.tf++
	f.w = float32(w)
	m[k] = f
}

// key is the feature key of kind over s.
func key(kind byte, s string) uint64 {
	h := hashOffset
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * hashPrime
	}
	return uint64(kind)<<kindShift | h&^kindMask
}

// addCJK counts overlapping character bigrams of a Han/kana/Hangul run,
// the usual unit for scripts written without spaces (a lone character
// counts by itself).
func addCJK(run string, counts bag) {
	_, n := utf8.DecodeRuneInString(run)
	if n == len(run) {
		counts.add(key(kindCJK, run), 1)
		return
	}
	for i := 0; i+n < len(run); {
		_, m := utf8.DecodeRuneInString(run[i+n:])
		counts.add(key(kindCJK, run[i:i+n+m]), 1)
		i, n = i+n, m
	}
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r)
}

func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// lower lowercases s, without allocating when it is already lowercase ASCII.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (c >= 'A' && c <= 'Z') {
			return strings.ToLower(s)
		}
	}
	return s
}

// word returns the stem and prior weight of a lowercase word. Only
// lowercase ASCII words of four letters or more are stemmed; others (with
// digits, accents, other scripts) are kept whole.
func (b *Builtin) word(w string) wordInfo {
	if v, ok := b.words.Load(w); ok {
		return v.(wordInfo)
	}
	info := wordInfo{stem: w, weight: 1}
	ascii := len(w) > 3
	for i := 0; i < len(w) && ascii; i++ {
		ascii = w[i] >= 'a' && w[i] <= 'z'
	}
	if ascii {
		info.stem = english.Stem(w, true)
	}
	if r, ok := b.tok.ranks[" "+w]; ok {
		info.weight = min(1, max(0.1, math.Log(float64(r+1))/math.Log(100256)))
	}
	b.mu.Lock()
	if b.size < wordCacheMax {
		b.size++
		info.stem = strings.Clone(info.stem)
		b.words.Store(strings.Clone(w), info)
	}
	b.mu.Unlock()
	return info
}

// vector hashes the features into signed dimensions, each weighted by its
// prior times 1+ln(tf), and L2-normalises.
func (b *Builtin) vector(counts bag) []float32 {
	v := make([]float32, b.dims)
	// Sum in key order: map order is random and float addition is not
	// associative, and the same text must give the same bits every time.
	keys := slices.Sorted(maps.Keys(counts))
	for _, k := range keys {
		f := counts[k]
		w := float64(f.w) * (1 + math.Log(float64(f.tf)))
		h := mix(k)
		if h>>63 == 1 {
			w = -w
		}
		v[h%uint64(b.dims)] += float32(w)
	}
	normalize(v)
	return v
}

// mix spreads a feature key over 64 bits (a final FNV round over the kind
// and an avalanche step), so index and sign are independent bits.
func mix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// normalize scales v to unit length (a zero vector stays zero).
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}
