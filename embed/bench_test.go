package embed

import (
	"context"
	"strings"
	"testing"
)

// source500KB is a realistic ~500 KB Markdown source: the fixtures repeated
// under numbered top-level headings.
func source500KB(b *testing.B) string {
	var sb strings.Builder
	fx := readFixtures(b)
	names := []string{"install-guide.md", "api-reference.md", "cjk-emoji.md", "long-paragraph.md", "big-fence.md", "edge-cases.md"}
	for i := 0; sb.Len() < 500*1024; i++ {
		sb.WriteString("\n\n# Part " + strings.Repeat("I", i%5+1) + "\n\n")
		sb.WriteString(fx[names[i%len(names)]])
	}
	return sb.String()[:500*1024]
}

func BenchmarkChunk500KB(b *testing.B) {
	src := source500KB(b)
	c := newTestChunker(b, DefaultChunkTokens, DefaultOverlap)
	var n int
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		n = len(c.Chunk(src))
	}
	b.ReportMetric(float64(n), "chunks")
}

func BenchmarkBuiltinEmbed500KB(b *testing.B) {
	src := source500KB(b)
	c := newTestChunker(b, DefaultChunkTokens, DefaultOverlap)
	var texts []string
	for _, ch := range c.Chunk(src) {
		texts = append(texts, EmbedText("Benchmark source", ch))
	}
	e := newTestBuiltin(b)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(texts)), "chunks")
}

// BenchmarkChunkAndEmbed500KB is the worker's pure path for one source.
func BenchmarkChunkAndEmbed500KB(b *testing.B) {
	src := source500KB(b)
	c := newTestChunker(b, DefaultChunkTokens, DefaultOverlap)
	e := newTestBuiltin(b)
	for b.Loop() {
		chunks := c.Chunk(src)
		texts := make([]string, len(chunks))
		for i, ch := range chunks {
			texts[i] = EmbedText("Benchmark source", ch)
		}
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadTokenizer is the one-off cost of parsing the embedded
// cl100k_base vocabulary (once per process).
func BenchmarkLoadTokenizer(b *testing.B) {
	for b.Loop() {
		if _, err := newTokenizer(cl100kVocab); err != nil {
			b.Fatal(err)
		}
	}
}
