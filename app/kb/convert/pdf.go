package convert

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ledongthuc/pdf"
)

// fromPDF lays a PDF's glyphs out as text: lines by their baseline, words
// by the gaps between glyphs, table cells by wide gaps (rows of two or more
// cells that follow each other become a Markdown table), headings by a
// bold or larger font. ledongthuc/pdf gives the glyphs and their positions;
// its own plain-text output runs words and table cells together.
func fromPDF(data []byte) (md string, err error) {
	if bytes.Contains(data, []byte("/Encrypt")) {
		return "", ErrEncrypted
	}
	defer func() {
		if r := recover(); r != nil { // the reader panics on some damaged files
			md, err = "", fmt.Errorf("not a readable PDF: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", errors.New("not a readable PDF: " + err.Error())
	}
	if r.NumPage() > MaxPDFPages {
		return "", tooLarge(fmt.Sprintf("PDF of %d pages (at most %d)", r.NumPage(), MaxPDFPages), MaxFileBytes)
	}
	var lines []pdfLine
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		lines = append(lines, pageLines(p.Content().Text)...)
	}
	return layout(lines), nil
}

// pdfLine is one baseline's text, split into cells at wide gaps.
type pdfLine struct {
	cells   []string
	size    float64 // the line's largest font size
	bold    bool    // every glyph bold
	y, step float64 // baseline and the gap to the line above (0: first on its page)
}

func pageLines(glyphs []pdf.Text) []pdfLine {
	sort.SliceStable(glyphs, func(i, j int) bool {
		if d := glyphs[i].Y - glyphs[j].Y; d > 1 || d < -1 {
			return d > 0
		}
		return glyphs[i].X < glyphs[j].X
	})
	var out []pdfLine
	for i := 0; i < len(glyphs); {
		j := i + 1
		tol := max(glyphs[i].FontSize*0.4, 1)
		for j < len(glyphs) && abs(glyphs[j].Y-glyphs[i].Y) <= tol {
			j++
		}
		l := lineOf(glyphs[i:j])
		if len(out) > 0 {
			l.step = out[len(out)-1].y - l.y
		}
		if len(l.cells) > 0 {
			out = append(out, l)
		}
		i = j
	}
	return out
}

func lineOf(gs []pdf.Text) pdfLine {
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].X < gs[j].X })
	l := pdfLine{y: gs[0].Y, bold: true}
	var cur strings.Builder
	end := gs[0].X
	for k, g := range gs {
		size := max(g.FontSize, 1)
		l.size = max(l.size, g.FontSize)
		if strings.TrimSpace(g.S) != "" && !strings.Contains(strings.ToLower(g.Font), "bold") {
			l.bold = false
		}
		gap := g.X - end
		switch {
		case k > 0 && gap > 1.2*size:
			l.cells = appendCell(l.cells, cur.String())
			cur.Reset()
		case k > 0 && gap > 0.15*size && !strings.HasSuffix(cur.String(), " ") && g.S != " ":
			cur.WriteString(" ")
		}
		cur.WriteString(g.S)
		end = g.X + g.W
	}
	l.cells = appendCell(l.cells, cur.String())
	if len(l.cells) >= 2 && isBullet(l.cells[0]) { // a bullet set apart from its text
		l.cells = append([]string{l.cells[0] + " " + l.cells[1]}, l.cells[2:]...)
	}
	return l
}

func isBullet(s string) bool {
	for _, b := range bullets {
		if s == b {
			return true
		}
	}
	return false
}

func appendCell(cells []string, s string) []string {
	if s = strings.Join(strings.Fields(s), " "); s != "" {
		cells = append(cells, s)
	}
	return cells
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

var bullets = []string{"•", "◦", "▪", "‣", "●", "○", "■", "–"}

// layout writes the lines as Markdown: runs of two or more lines with the
// same number of cells (two or more) as tables, short bold or large lines
// as headings, bullets as list items, the rest as paragraphs.
func layout(lines []pdfLine) string {
	body := bodySize(lines)
	var b strings.Builder
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString(strings.Join(para, " ") + "\n\n")
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if n := len(l.cells); n >= 2 {
			j := i + 1
			for j < len(lines) && len(lines[j].cells) == n {
				j++
			}
			if j-i >= 2 {
				flush()
				rows := make([][]string, 0, j-i)
				for _, r := range lines[i:j] {
					rows = append(rows, r.cells)
				}
				writeTable(&b, rows)
				i = j - 1
				continue
			}
		}
		text := strings.Join(l.cells, " ")
		if bigGap := l.step > 1.8*max(l.size, body); bigGap {
			flush()
		}
		switch {
		case isHeading(l, text, body):
			flush()
			level := 2
			if l.size > 1.4*body {
				level = 1
			}
			b.WriteString(strings.Repeat("#", level) + " " + text + "\n\n")
		case bulleted(text) != "":
			flush()
			b.WriteString("- " + bulleted(text) + "\n")
		default:
			if n := len(para); n > 0 && strings.HasSuffix(para[n-1], "-") {
				para[n-1] = strings.TrimSuffix(para[n-1], "-") + text
			} else {
				para = append(para, text)
			}
		}
	}
	flush()
	return collapse(b.String())
}

func isHeading(l pdfLine, text string, body float64) bool {
	if len(text) > 100 || strings.HasSuffix(text, ".") || bulleted(text) != "" {
		return false
	}
	return l.size > 1.15*body || l.bold
}

// bulleted is a list item's text without its bullet, "" when not one.
func bulleted(text string) string {
	for _, p := range bullets {
		if rest, ok := strings.CutPrefix(text, p); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// bodySize is the font size most of the text is set in.
func bodySize(lines []pdfLine) float64 {
	count := map[float64]int{}
	best, n := 10.0, 0
	for _, l := range lines {
		k := float64(int(l.size*2+0.5)) / 2
		count[k] += len(strings.Join(l.cells, ""))
		if count[k] > n {
			best, n = k, count[k]
		}
	}
	return best
}
