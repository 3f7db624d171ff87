package embed

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunking defaults of API.md: 384 cl100k_base tokens, 32 of them shared
// with the previous chunk.
const (
	DefaultChunkTokens = 384
	DefaultOverlap     = 32
)

// Chunk is one piece of a Markdown source, ready to embed.
type Chunk struct {
	// Index is the chunk's position in the source, from 0.
	Index int
	// Text is the exact source text: Text == markdown[Start:End].
	Text string
	// HeadingPath holds the headings the chunk's own content (after the
	// overlap) sits under, outermost first, e.g. ["Install", "Linux"]. A
	// chunk that spans sibling sections gets their common parent; it is
	// empty before the first heading.
	HeadingPath []string
	// Tokens is the number of cl100k_base tokens of Text (<= the maximum).
	Tokens int
	// Start and End are byte offsets of Text in the source. Start is below
	// the previous chunk's End by the overlap, so the chunks cover every
	// byte and markdown == chunks[0].Text + each later Text[prev.End-Start:].
	Start, End int
}

// Chunker cuts Markdown into chunks of at most maxTokens cl100k_base tokens.
// It is safe for concurrent use.
type Chunker struct {
	max, overlap int
	tok          *tokenizer
}

// NewChunker returns a chunker of maxTokens-token chunks where consecutive
// chunks share about overlap tokens (DefaultChunkTokens, DefaultOverlap).
func NewChunker(maxTokens, overlap int) (*Chunker, error) {
	if maxTokens < 16 {
		return nil, fmt.Errorf("chunk size %d tokens: must be at least 16", maxTokens)
	}
	if overlap < 0 || overlap > maxTokens/2 {
		return nil, fmt.Errorf("chunk overlap %d tokens: must be between 0 and half the chunk size", overlap)
	}
	tok, err := loadTokenizer()
	if err != nil {
		return nil, errors.Join(errors.New("load cl100k_base"), err)
	}
	return &Chunker{max: maxTokens, overlap: overlap, tok: tok}, nil
}

// CountTokens returns the number of cl100k_base tokens of text.
func (c *Chunker) CountTokens(text string) int { return c.tok.Count(text) }

// document is a source split into cl100k pre-tokens ("pieces"): pieces
// never straddle a Markdown line start, so cutting between pieces keeps
// token counts exact: a chunk of whole pieces re-encodes to the same tokens.
type document struct {
	src   string
	off   []int   // piece boundaries, off[0] = 0 and off[n] = len(src)
	cum   []int   // cum[i]: tokens before boundary i
	level []uint8 // cut level at boundary i
	heads []heading
}

// core is a chunk before overlap is added; boundary indices into document,
// or byte offsets for the fragments of one oversized piece (isolated).
type core struct {
	s, e     int
	isolated bool
	start    int
	end      int
	tokens   int
}

// Chunk cuts markdown into chunks. Every byte of the input is in some
// chunk; cuts fall at the best Markdown boundary available (heading, then
// block, line, sentence, word) and never inside a fenced code block, table
// row, setext heading or front matter that fits in one chunk.
//
// An oversized fence (more than maxTokens tokens by itself) is split
// between its lines, and a line too long for a chunk between its words; the
// fence markers stay on the first and last piece, so middle chunks hold
// bare code. A single pre-token longer than a chunk (a 2,000-character word
// or CJK run) is split at token boundaries that fall between runes, and
// those fragments share no overlap with their neighbours.
func (c *Chunker) Chunk(markdown string) []Chunk {
	if markdown == "" {
		return nil
	}
	d := c.analyse(markdown)
	cores := c.cores(d)
	chunks := make([]Chunk, 0, len(cores))
	for k, co := range cores {
		start, tokens := co.start, co.tokens
		if k > 0 && !co.isolated && !cores[k-1].isolated && c.overlap > 0 {
			p := c.overlapStart(d, cores[k-1].s, co.s, min(c.overlap, c.max-co.tokens))
			start, tokens = d.off[p], d.cum[co.e]-d.cum[p]
		}
		chunks = append(chunks, Chunk{
			Index:       k,
			Text:        markdown[start:co.end],
			HeadingPath: headingPath(d.heads, co.start, co.end),
			Tokens:      tokens,
			Start:       start,
			End:         co.end,
		})
	}
	return chunks
}

// analyse splits src into pieces and gives each boundary its cut level.
func (c *Chunker) analyse(src string) *document {
	n := len(src)/4 + 2
	d := &document{src: src, off: make([]int, 1, n), cum: make([]int, 1, n)}
	total := 0
	for i := 0; i < len(src); {
		j := nextPiece(src, i)
		total += c.tok.count(src[i:j])
		d.off = append(d.off, j)
		d.cum = append(d.cum, total)
		i = j
	}
	d.level = make([]uint8, len(d.off))
	for i := 1; i < len(d.off)-1; i++ {
		d.level[i] = inlineLevel(src, d.off[i])
		// "a  0" is "a", " ", " ", "0", but a chunk ending in "a  " would
		// re-encode its two spaces as one token: never end between them.
		if i >= 2 && blankPiece(src[d.off[i-1]:d.off[i]]) && blankPiece(src[d.off[i-2]:d.off[i-1]]) {
			d.level[i] = levelNever
		}
	}
	o := parseOutline(src)
	d.heads = o.headings
	i := 0
	for _, m := range o.marks {
		for i < len(d.off) && d.off[i] < m.off {
			i++
		}
		if i < len(d.off) && d.off[i] == m.off && i > 0 && i < len(d.off)-1 {
			d.level[i] = m.level
		}
	}
	for _, sp := range o.spans {
		a := sort.SearchInts(d.off, sp.start)
		b := sort.SearchInts(d.off, sp.end)
		if b < len(d.off) && d.cum[b]-d.cum[a] <= c.max {
			for k := a + 1; k < b && k < len(d.off)-1; k++ {
				d.level[k] = levelNever
			}
		}
	}
	return d
}

// blankPiece reports a piece of whitespace without a line break.
func blankPiece(p string) bool {
	return strings.TrimFunc(p, unicode.IsSpace) == "" && !strings.ContainsAny(p, "\r\n")
}

// inlineLevel is the cut level of a boundary inside a line.
func inlineLevel(src string, off int) uint8 {
	r, _ := utf8.DecodeLastRuneInString(src[:off])
	next := src[off]
	space := next == ' ' || next == '\t' || next == '\n' || next == '\r'
	switch r {
	case '.', '!', '?', ';', ':':
		if space {
			return levelSentence
		}
	case '。', '！', '？', '；':
		return levelSentence
	case ' ', '\t', '\n':
		return levelWord
	}
	if space {
		return levelWord
	}
	return levelSubword
}

// cores cuts the document into consecutive non-overlapping cores of at most
// max-overlap tokens (or max, for one unbreakable block), so that the
// overlap can be added in front of each without passing max.
func (c *Chunker) cores(d *document) []core {
	budget := c.max - c.overlap
	n := len(d.off) - 1
	var out []core
	add := func(s, e int) {
		out = append(out, core{s: s, e: e, start: d.off[s], end: d.off[e], tokens: d.cum[e] - d.cum[s]})
	}
	q, qmax := 0, 0
	for s := 0; s < n; {
		q, qmax = max(q, s), max(qmax, s)
		for q < n && d.cum[q+1]-d.cum[s] <= budget {
			q++
		}
		for qmax < n && d.cum[qmax+1]-d.cum[s] <= c.max {
			qmax++
		}
		if q == n {
			add(s, n)
			break
		}
		e := c.cut(d, s, q, budget)
		if e < 0 {
			e = lastLegal(d, s, qmax) // one unbreakable block of budget..max
		}
		if e < 0 && qmax > s {
			e = qmax // cannot happen with a well-formed outline; stay safe
		}
		if e < 0 {
			out = append(out, c.fragments(d, s)...)
			s++
			continue
		}
		add(s, e)
		s = e
	}
	return out
}

// minFill is the share of the budget a chunk must reach before a cut at
// each level is taken (budget/minFill): a heading break is worth a chunk a
// quarter full, the others half full.
var minFill = [levelSubword + 1]int{4, 2, 2, 2, 2, 0}

// cut picks the end of the core starting at boundary s, within (s, q]: the
// last boundary of the best level that leaves the chunk full enough, or
// failing that (an unbreakable block ahead) the last of the best level.
func (c *Chunker) cut(d *document, s, q, budget int) int {
	var best, any [levelSubword + 1]int
	for l := range best {
		best[l], any[l] = -1, -1
	}
	for i := q; i > s; i-- {
		lv := d.level[i]
		if lv > levelSubword {
			continue
		}
		if any[lv] < 0 {
			any[lv] = i
		}
		fill := d.cum[i] - d.cum[s]
		for l := lv; l <= levelSubword; l++ {
			if best[l] < 0 && (minFill[l] == 0 || fill*minFill[l] >= budget) {
				best[l] = i
			}
		}
	}
	for l := levelHeading; l <= levelWord; l++ {
		if best[l] >= 0 {
			return best[l]
		}
	}
	for l := levelHeading; l <= levelWord; l++ {
		if any[l] >= 0 {
			return any[l]
		}
	}
	return best[levelSubword] // the last legal boundary, or -1
}

func lastLegal(d *document, s, q int) int {
	for i := q; i > s; i-- {
		if d.level[i] <= levelSubword || i == len(d.off)-1 {
			return i
		}
	}
	return -1
}

// overlapStart returns where the chunk whose core starts at boundary s
// begins, at most allowed tokens before s and after from: the
// earliest line start there if it gives at least a quarter of the allowed
// overlap (code and lists then start on a whole line), else the earliest
// word boundary, else the earliest legal boundary.
func (c *Chunker) overlapStart(d *document, from, s, allowed int) int {
	line, word, legal := -1, -1, s
	for i := s - 1; i > from && d.cum[s]-d.cum[i] <= allowed; i-- {
		lv := d.level[i]
		if lv <= levelSubword {
			legal = i
		}
		if lv <= levelWord {
			word = i
		}
		if lv <= levelLine && 4*(d.cum[s]-d.cum[i]) >= allowed {
			line = i
		}
	}
	switch {
	case line >= 0:
		return line
	case word >= 0:
		return word
	}
	return legal
}

// fragments splits the single piece after boundary s, too long for any
// chunk, at token boundaries between runes. Each fragment is re-counted on
// its own, since BPE of a part of a piece may differ from the whole.
func (c *Chunker) fragments(d *document, s int) []core {
	a, end := d.off[s], d.off[s+1]
	piece := d.src[a:end]
	bounds := c.tok.split(piece, nil)
	budget := c.max - c.overlap
	var out []core
	ti := 0 // index into bounds of the fragment start
	for ti < len(bounds)-1 {
		j := min(ti+budget, len(bounds)-1)
		for {
			for j > ti+1 && bounds[j] < len(piece) && !utf8.RuneStart(piece[bounds[j]]) {
				j--
			}
			n := c.tok.Count(piece[bounds[ti]:bounds[j]])
			if n <= c.max || j <= ti+1 {
				out = append(out, core{s: s, e: s + 1, isolated: true,
					start: a + bounds[ti], end: a + bounds[j], tokens: n})
				break
			}
			j = max(ti+1, j-max(1, n-c.max))
		}
		ti = j
	}
	return out
}

// headingPath returns the headings a core at [start, end) sits under: the
// path at its start, cut back to what every heading inside it shares, so a
// chunk that runs over two subsections of "Linux" is filed under "Linux".
func headingPath(hs []heading, start, end int) []string {
	k := sort.Search(len(hs), func(i int) bool { return hs[i].off > start })
	if k == 0 {
		return nil
	}
	path := hs[k-1].path
	for ; k < len(hs) && hs[k].off < end; k++ {
		n := 0
		for n < len(path) && n < len(hs[k].path) && path[n] == hs[k].path[n] {
			n++
		}
		path = path[:n]
	}
	if len(path) == 0 {
		return nil
	}
	return append([]string(nil), path...)
}

// EmbedText is the text to embed for a chunk: the source title and the
// chunk's heading path in front of its text, so a chunk that only says
// "run make" is still found by a query about installing on Linux.
func EmbedText(title string, c Chunk) string {
	var b strings.Builder
	parts := make([]string, 0, len(c.HeadingPath)+1)
	title = strings.TrimSpace(title)
	if title != "" {
		parts = append(parts, title)
	}
	for i, h := range c.HeadingPath {
		if i == 0 && strings.EqualFold(h, title) {
			continue
		}
		if h != "" {
			parts = append(parts, h)
		}
	}
	if len(parts) > 0 {
		b.WriteString(strings.Join(parts, " > "))
		b.WriteString("\n\n")
	}
	b.WriteString(c.Text)
	return b.String()
}
