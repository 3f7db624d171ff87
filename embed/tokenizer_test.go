package embed

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go itself, loaded offline; our tokenizer must agree
// with it token for token.
var reference = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	return tiktoken.GetEncoding("cl100k_base")
})

func testTokenizer(t testing.TB) *tokenizer {
	t.Helper()
	tok, err := loadTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestVocabularyIsCL100K(t *testing.T) {
	sum := sha256.Sum256([]byte(cl100kVocab))
	if got := hex.EncodeToString(sum[:]); got != "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7" {
		t.Fatalf("embedded vocabulary sha256 = %s, not OpenAI's cl100k_base", got)
	}
	if n := len(testTokenizer(t).ranks); n != 100256 {
		t.Fatalf("vocabulary has %d tokens, want 100256", n)
	}
}

var tokenizerSamples = []string{
	"",
	"hello world",
	"Hello, World! It's a test: we'll see, they've gone, I'm here, you'd go, DON'T, 'Quote'",
	"  leading spaces and trailing   ",
	"tabs\tand\t\tnewlines\n\n\nand\r\ncrlf \n  \n\tx",
	"numbers 1 12 123 1234 12345 3.14159 1,000,000 ٣٤٥ ⅧⅨ",
	"punctuation!!! ... ??? --- *** ``` ~~~ |---|:---:| <div> </div> &amp;",
	"```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n",
	"中文文本没有空格也能分词。日本語のテキスト、カタカナ。한국어 텍스트",
	"emoji 😀👍🏽 family 👨‍👩‍👧‍👦 flags 🇫🇷🇩🇪 zwj\u200dtest",
	"ideographic\u3000space and nbsp\u00a0here, nel\u0085x, ls\u2028y \v\f",
	"combining e\u0301 a\u0308 ñ résumé naïve façade",
	"URL https://example.com/path?q=1&b=2#frag and email a.b@c.io",
	"'s 'S 'RE 'Ve 'LL 'd 'x ' 's",
	strings.Repeat("a", 300),
	strings.Repeat("ab ", 200),
	strings.Repeat("😀", 100),
	strings.Repeat("=", 500) + "\n" + strings.Repeat(" ", 300) + "x",
	strings.Repeat("长", 400),
	"$ agentd serve --addr=:8080 --db ./agentd.db 2>&1 | tee log.txt",
}

func TestTokenizerMatchesTiktoken(t *testing.T) {
	ref, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	tok := testTokenizer(t)
	for _, s := range tokenizerSamples {
		want := ref.EncodeOrdinary(s)
		got := tok.encode(s)
		if !slices.Equal(got, want) {
			t.Errorf("encode(%.40q):\n got %v\nwant %v", s, got, want)
		}
		if n := tok.Count(s); n != len(want) {
			t.Errorf("Count(%.40q) = %d, want %d", s, n, len(want))
		}
	}
}

func TestTokenizerFixtures(t *testing.T) {
	ref, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	tok := testTokenizer(t)
	for name, doc := range readFixtures(t) {
		if got, want := tok.encode(doc), ref.EncodeOrdinary(doc); !slices.Equal(got, want) {
			t.Errorf("%s: tokens differ from tiktoken-go (%d vs %d tokens)", name, len(got), len(want))
		}
	}
}

// TestSplitHeapMatchesQuadratic checks the O(n log n) merge against the
// quadratic one on pieces long enough to take the heap path.
func TestSplitHeapMatchesQuadratic(t *testing.T) {
	tok := testTokenizer(t)
	for _, s := range []string{strings.Repeat("abcdefgh", 40), strings.Repeat("😀x", 50), strings.Repeat("=-", 90), strings.Repeat("长城", 70)} {
		ref, err := reference()
		if err != nil {
			t.Fatal(err)
		}
		want := ref.EncodeOrdinary(s)
		if got := tok.encode(s); !slices.Equal(got, want) {
			t.Errorf("%.20q: heap split differs from tiktoken-go", s)
		}
	}
}

// FuzzTokenizer compares the hand-written pre-tokeniser and merge with
// tiktoken-go on arbitrary valid UTF-8 (tiktoken-go turns invalid bytes into
// U+FFFD, so only the piece structure could match there).
func FuzzTokenizer(f *testing.F) {
	for _, s := range tokenizerSamples {
		f.Add(s)
	}
	ref, err := reference()
	if err != nil {
		f.Fatal(err)
	}
	tok := testTokenizer(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			// Invalid input must still be covered exactly by the pieces.
			n := 0
			for i := 0; i < len(s); {
				j := nextPiece(s, i)
				if j <= i {
					t.Fatalf("no progress at %d", i)
				}
				n += tok.count(s[i:j])
				i = j
			}
			if n < 1 && s != "" {
				t.Fatal("no tokens")
			}
			return
		}
		if got, want := tok.encode(s), ref.EncodeOrdinary(s); !slices.Equal(got, want) {
			t.Fatalf("encode(%q):\n got %v\nwant %v", s, got, want)
		}
	})
}
