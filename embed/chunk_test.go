package embed

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func readFixtures(t testing.TB) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../testdata/markdown/*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Markdown fixtures: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(b)
	}
	return out
}

func newTestChunker(t testing.TB, maxTokens, overlap int) *Chunker {
	t.Helper()
	c, err := NewChunker(maxTokens, overlap)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fence is a fenced code block found by fencesOf, with the blank lines
// after it.
type fence struct{ start, end int }

// fencesOf finds backtick fences that open at column 0, independently of
// the chunker's parser. ok is false when the input has fence-like lines
// this simple scanner does not judge the same way (indented or tilde
// fences, front matter, fence lines inside tables).
func fencesOf(src string) (fs []fence, ok bool) {
	if strings.HasPrefix(src, "---") || strings.Contains(src, "~~~") {
		return nil, false
	}
	open, n := -1, 0
	for i := 0; i < len(src); {
		j := strings.IndexByte(src[i:], '\n')
		if j < 0 {
			j = len(src)
		} else {
			j += i + 1
		}
		line := strings.TrimRight(src[i:j], "\r\n")
		trimmed := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(trimmed, "```") && (trimmed != line || strings.Contains(line, "|")) {
			return nil, false
		}
		ticks := len(line) - len(strings.TrimLeft(line, "`"))
		switch {
		case open < 0 && ticks >= 3 && !strings.Contains(line[ticks:], "`"):
			open, n = i, ticks
		case open >= 0 && ticks >= n && strings.TrimLeft(line[ticks:], " \t\r") == "":
			end := j
			for end < len(src) {
				k := strings.IndexByte(src[end:], '\n')
				if k < 0 || strings.TrimLeft(src[end:end+k], " \t\r") != "" {
					break
				}
				end += k + 1
			}
			fs = append(fs, fence{open, end})
			open = -1
		}
		i = j
	}
	if open >= 0 {
		fs = append(fs, fence{open, len(src)})
	}
	return fs, true
}

// checkChunks asserts the chunker's invariants on one input.
func checkChunks(t *testing.T, c *Chunker, src string, chunks []Chunk) {
	t.Helper()
	if strings.TrimSpace(src) == "" && src == "" {
		if len(chunks) != 0 {
			t.Fatalf("empty input gave %d chunks", len(chunks))
		}
		return
	}
	if len(chunks) == 0 {
		t.Fatal("no chunks for non-empty input")
	}
	var rebuilt strings.Builder
	prevStart, prevEnd := -1, 0
	for i, ch := range chunks {
		if ch.Index != i {
			t.Fatalf("chunk %d has Index %d", i, ch.Index)
		}
		if ch.Start < 0 || ch.End > len(src) || ch.Start >= ch.End || ch.Text != src[ch.Start:ch.End] {
			t.Fatalf("chunk %d: [%d,%d) does not match its text", i, ch.Start, ch.End)
		}
		if ch.Start > prevEnd || ch.Start <= prevStart || ch.End <= prevEnd {
			t.Fatalf("chunk %d [%d,%d) does not continue chunk %d ending at %d", i, ch.Start, ch.End, i-1, prevEnd)
		}
		rebuilt.WriteString(src[prevEnd:ch.End])
		if n := c.CountTokens(ch.Text); n != ch.Tokens || n > c.max {
			t.Fatalf("chunk %d: %d tokens (says %d), max %d", i, n, ch.Tokens, c.max)
		}
		if i > 0 {
			if ov := c.CountTokens(src[ch.Start:prevEnd]); ov > c.overlap {
				t.Fatalf("chunk %d overlaps the previous one by %d tokens, max %d", i, ov, c.overlap)
			}
		}
		if utf8.ValidString(src) && !utf8.ValidString(ch.Text) {
			t.Fatalf("chunk %d cuts a rune: %q", i, ch.Text)
		}
		prevStart, prevEnd = ch.Start, ch.End
	}
	if rebuilt.String() != src {
		t.Fatal("chunks minus overlaps do not rebuild the input")
	}
	fences, ok := fencesOf(src)
	if !ok {
		return
	}
	for _, f := range fences {
		if c.CountTokens(src[f.start:f.end]) > c.max {
			continue
		}
		for i, ch := range chunks {
			if (ch.Start > f.start && ch.Start < f.end) || (ch.End > f.start && ch.End < f.end) {
				t.Fatalf("chunk %d [%d,%d) cuts the fence [%d,%d) that fits: %q", i, ch.Start, ch.End, f.start, f.end, src[f.start:f.end])
			}
		}
	}
}

func TestNewChunkerValidates(t *testing.T) {
	for _, tc := range []struct{ max, overlap int }{{0, 0}, {15, 0}, {100, -1}, {100, 51}} {
		if _, err := NewChunker(tc.max, tc.overlap); err == nil {
			t.Errorf("NewChunker(%d, %d) accepted", tc.max, tc.overlap)
		}
	}
	if _, err := NewChunker(DefaultChunkTokens, DefaultOverlap); err != nil {
		t.Fatal(err)
	}
}

// findChunk returns the first chunk containing s.
func findChunk(t *testing.T, chunks []Chunk, s string) Chunk {
	t.Helper()
	for _, c := range chunks {
		if strings.Contains(c.Text, s) {
			return c
		}
	}
	t.Fatalf("no chunk contains %q", s)
	return Chunk{}
}

func TestChunkFixtures(t *testing.T) {
	fixtures := readFixtures(t)
	tests := []struct {
		file         string
		max, overlap int
		minChunks    int
		check        func(t *testing.T, src string, chunks []Chunk)
	}{
		{"install-guide.md", 128, 16, 6, func(t *testing.T, src string, chunks []Chunk) {
			// This chunk runs from the end of "Debian and Ubuntu" over
			// "Fedora and RHEL", so it is filed under their parent.
			want := []string{"Installing agentd", "Linux"}
			if got := findChunk(t, chunks, "restorecon").HeadingPath; !slices.Equal(got, want) {
				t.Errorf("heading path %q, want %q", got, want)
			}
			for _, row := range strings.Split(src, "\n") {
				if strings.HasPrefix(row, "| ") {
					findChunk(t, chunks, row) // table rows are never cut
				}
			}
			findChunk(t, chunks, "[Install]\nWantedBy=multi-user.target\n```")
		}},
		{"install-guide.md", DefaultChunkTokens, DefaultOverlap, 2, func(t *testing.T, src string, chunks []Chunk) {
			for _, c := range chunks[1:] {
				if !strings.HasPrefix(src[c.End-1:], "\n") && c.End != len(src) {
					t.Errorf("chunk %d ends mid-line: %q", c.Index, c.Text[len(c.Text)-20:])
				}
			}
		}},
		{"api-reference.md", 96, 8, 4, func(t *testing.T, src string, chunks []Chunk) {
			want := []string{"Knowledge API reference", "Sources", "Batch upserts"}
			if got := findChunk(t, chunks, "all-or-nothing").HeadingPath; !slices.Equal(got, want) {
				t.Errorf("heading path %q, want %q", got, want)
			}
			findChunk(t, chunks, "| metadata | object | no | stored as given |")
		}},
		{"big-fence.md", DefaultChunkTokens, DefaultOverlap, 6, func(t *testing.T, src string, chunks []Chunk) {
			open := strings.Index(src, "```python")
			close := strings.Index(src, "```\n\n## Small")
			for _, c := range chunks {
				for _, at := range []int{c.Start, c.End} {
					if at > open && at < close && src[at-1] != '\n' {
						t.Errorf("oversized fence cut mid-line at %d", at)
					}
				}
			}
			findChunk(t, chunks, "```sh\nagentd reindex --collection docs\n```")
			if got := findChunk(t, chunks, "handler_60").HeadingPath; !slices.Equal(got, []string{"Oversized code block"}) {
				t.Errorf("heading path %q", got)
			}
		}},
		{"long-paragraph.md", DefaultChunkTokens, DefaultOverlap, 5, func(t *testing.T, src string, chunks []Chunk) {
			para := strings.Index(src, "\n\n## After")
			for _, c := range chunks {
				if c.End < para && src[c.End-1] != '.' {
					t.Errorf("chunk %d ends mid-sentence: %q", c.Index, src[c.End-10:c.End])
				}
			}
			findChunk(t, chunks, "## After the long paragraph\n\nA short closing section.")
		}},
		{"cjk-emoji.md", 32, 4, 8, func(t *testing.T, src string, chunks []Chunk) {
			want := []string{"多言語サポート 🌏", "한국어"}
			if got := findChunk(t, chunks, "에이전트는").HeadingPath; !slices.Equal(got, want) {
				t.Errorf("heading path %q, want %q", got, want)
			}
			findChunk(t, chunks, "👨‍👩‍👧‍👦")
		}},
		{"edge-cases.md", 48, 4, 4, func(t *testing.T, src string, chunks []Chunk) {
			if p := chunks[0].HeadingPath; len(p) != 0 {
				t.Errorf("front matter chunk has heading path %q", p)
			}
			findChunk(t, chunks, "---\ntitle: Edge cases\ntags: [markdown, chunking]\n---")
			findChunk(t, chunks, "~~~text\nA tilde fence\n```\nwith a backtick fence line inside it that does not close it\n```\n~~~")
			want := []string{"Setext heading one", "Setext heading two", "Closed heading"}
			if got := findChunk(t, chunks, "Trailing text").HeadingPath; !slices.Equal(got, want) {
				t.Errorf("heading path %q, want %q", got, want)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			src := fixtures[tc.file]
			c := newTestChunker(t, tc.max, tc.overlap)
			chunks := c.Chunk(src)
			checkChunks(t, c, src, chunks)
			if len(chunks) < tc.minChunks {
				t.Fatalf("%d chunks, want at least %d", len(chunks), tc.minChunks)
			}
			tc.check(t, src, chunks)
		})
	}
}

func TestChunkHeadingPaths(t *testing.T) {
	// Each section is too big to share a 16-token chunk with the next one.
	src := "# Guide\n\nIntro to the whole guide, read it first.\n\n## Linux\n\nUse apt to install the package on Debian.\n\n" +
		"### Fedora\n\nUse dnf to install the package on Fedora.\n\n## macOS\n\nUse brew to install the package on a Mac.\n"
	c := newTestChunker(t, 16, 0)
	chunks := c.Chunk(src)
	checkChunks(t, c, src, chunks)
	want := map[string][]string{
		"Intro":    {"Guide"},
		"Use apt":  {"Guide", "Linux"},
		"Use dnf":  {"Guide", "Linux", "Fedora"},
		"Use brew": {"Guide", "macOS"},
	}
	for text, path := range want {
		if got := findChunk(t, chunks, text).HeadingPath; !slices.Equal(got, path) {
			t.Errorf("chunk with %q: heading path %q, want %q", text, got, path)
		}
	}
	if got := c.Chunk("no heading here")[0].HeadingPath; got != nil {
		t.Errorf("heading path %q before any heading", got)
	}
}

func TestChunkOverlapIsNearTarget(t *testing.T) {
	src := readFixtures(t)["long-paragraph.md"]
	c := newTestChunker(t, DefaultChunkTokens, DefaultOverlap)
	chunks := c.Chunk(src)
	for i := 1; i < len(chunks); i++ {
		ov := c.CountTokens(src[chunks[i].Start:chunks[i-1].End])
		if ov < DefaultOverlap/2 {
			t.Errorf("chunk %d overlaps by %d tokens, want about %d", i, ov, DefaultOverlap)
		}
	}
}

func TestChunkOversizedPieces(t *testing.T) {
	c := newTestChunker(t, 64, 8)
	for name, src := range map[string]string{
		"latin word": "# Blob\n\n" + strings.Repeat("abcdefghij", 2000) + "\n\nafter",
		"cjk run":    strings.Repeat("长城很长", 800),
		"emoji run":  "x " + strings.Repeat("😀🚀", 700) + " y",
		"spaces":     "a" + strings.Repeat(" ", 5000) + "b",
		"whitespace": "\n\n \t \n",
	} {
		t.Run(name, func(t *testing.T) {
			chunks := c.Chunk(src)
			checkChunks(t, c, src, chunks)
		})
	}
}

func TestChunkEmptyAndTiny(t *testing.T) {
	c := newTestChunker(t, DefaultChunkTokens, DefaultOverlap)
	if got := c.Chunk(""); got != nil {
		t.Fatalf("Chunk(\"\") = %v", got)
	}
	got := c.Chunk("# Title\n\nHello.")
	if len(got) != 1 || got[0].Text != "# Title\n\nHello." || !slices.Equal(got[0].HeadingPath, []string{"Title"}) || got[0].Tokens != 5 {
		t.Fatalf("Chunk(tiny) = %+v", got)
	}
}

func TestChunkConcurrent(t *testing.T) {
	c := newTestChunker(t, 96, 8)
	src := readFixtures(t)["install-guide.md"]
	want := c.Chunk(src)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := c.Chunk(src); len(got) != len(want) || got[len(got)-1].Text != want[len(want)-1].Text {
				t.Error("concurrent Chunk differs")
			}
		})
	}
	wg.Wait()
}

func TestEmbedText(t *testing.T) {
	c := Chunk{Text: "Run make.", HeadingPath: []string{"Install guide", "Linux"}}
	if got, want := EmbedText("Install guide", c), "Install guide > Linux\n\nRun make."; got != want {
		t.Errorf("EmbedText = %q, want %q", got, want)
	}
	if got, want := EmbedText("", Chunk{Text: "x"}), "x"; got != want {
		t.Errorf("EmbedText = %q, want %q", got, want)
	}
	if got, want := EmbedText("Handbook", c), "Handbook > Install guide > Linux\n\nRun make."; got != want {
		t.Errorf("EmbedText = %q, want %q", got, want)
	}
}

// FuzzChunk checks the invariants on arbitrary input and chunk sizes: every
// byte (so every token) covered and rebuilt, chunks within the limit with
// exact token counts, overlap within its budget, and no cut inside a code
// fence that fits in one chunk.
func FuzzChunk(f *testing.F) {
	for _, src := range readFixtures(f) {
		f.Add(src, uint16(48), uint8(8))
	}
	f.Add("```\ncode\n```\n\ntext", uint16(16), uint8(2))
	f.Add("| a | b |\n|---|---|\n| 1 | 2 |\n", uint16(16), uint8(4))
	f.Add(strings.Repeat("word ", 100), uint16(20), uint8(10))
	f.Fuzz(func(t *testing.T, src string, maxTokens uint16, overlap uint8) {
		m := 16 + int(maxTokens)%400
		c := newTestChunker(t, m, int(overlap)%(m/2+1))
		checkChunks(t, c, src, c.Chunk(src))
	})
}
