package embed

import "strings"

// Cut levels: where a chunk may end, best first. A chunk is cut at the best
// level available once it is reasonably full (see Chunker.cut).
const (
	levelHeading  uint8 = iota // before a heading line
	levelBlock                 // before a paragraph, list item, fence, table, quote
	levelLine                  // before another line of the same block or table row
	levelSentence              // after . ! ? inside a line
	levelWord                  // before or after whitespace
	levelSubword               // any other token-piece boundary ("SHA-|256", CJK)
	levelNever    uint8 = 255  // inside a fence or table row that fits in a chunk
)

// mark is the cut level of a line start.
type mark struct {
	off   int
	level uint8
}

// span is a run of bytes that must not be cut when it fits in one chunk:
// a fenced code block (with its fences), a table row, a setext heading, a
// front-matter block.
type span struct{ start, end int }

// heading records a heading line and the path of headings it opens.
type heading struct {
	off  int
	path []string
}

// outline is what the chunker needs to know about a Markdown document.
type outline struct {
	marks    []mark
	spans    []span
	headings []heading
}

// parseOutline scans Markdown line by line. It is deliberately a small
// subset of CommonMark: enough to find block starts, headings, fences and
// tables, robust to any input (it never fails, it only guesses less well).
func parseOutline(src string) outline {
	var o outline
	var lines []span
	for i := 0; i < len(src); {
		j := strings.IndexByte(src[i:], '\n')
		if j < 0 {
			j = len(src)
		} else {
			j += i + 1
		}
		lines = append(lines, span{i, j})
		i = j
	}
	text := func(k int) string {
		return strings.TrimRight(src[lines[k].start:lines[k].end], "\r\n")
	}
	var stack []heading // open headings by level, stack[d].path has d+1 entries
	levels := []int{}
	openHeading := func(off, lvl int, title string) {
		for len(levels) > 0 && levels[len(levels)-1] >= lvl {
			levels = levels[:len(levels)-1]
			stack = stack[:len(stack)-1]
		}
		path := []string{title}
		if len(stack) > 0 {
			parent := stack[len(stack)-1].path
			path = append(append(make([]string, 0, len(parent)+1), parent...), title)
		}
		h := heading{off, path}
		stack = append(stack, h)
		levels = append(levels, lvl)
		o.headings = append(o.headings, h)
	}

	newBlock := true      // the next non-blank line starts a block
	afterHeading := false // a heading stays with the text that follows it
	prevPara := false
	inQuote := false
	for k := 0; k < len(lines); k++ {
		ln := lines[k]
		t := text(k)
		if isBlank(t) {
			newBlock, prevPara, inQuote = true, false, false
			continue
		}
		level := levelLine
		if newBlock && !afterHeading {
			level = levelBlock
		}
		headingLevel := levelHeading
		if afterHeading {
			headingLevel = levelLine
		}
		wasHeading := afterHeading
		afterHeading = false
		trimmed := strings.TrimLeft(t, " \t")
		switch {
		case k == 0 && t == "---":
			// YAML front matter: one unit up to the closing line.
			end := k + 1
			for end < len(lines) && text(end) != "---" && text(end) != "..." {
				end++
			}
			if end == len(lines) {
				break
			}
			o.marks = append(o.marks, mark{ln.start, levelBlock})
			o.spans = append(o.spans, span{ln.start, lines[end].end})
			k = end
			newBlock, prevPara = true, false
			continue
		case isFenceOpen(trimmed):
			ch, n := trimmed[0], fenceLen(trimmed)
			o.marks = append(o.marks, mark{ln.start, levelBlock})
			end := k + 1
			for ; end < len(lines); end++ {
				c := strings.TrimLeft(text(end), " \t")
				if fenceLen(c) >= n && c[0] == ch && isBlank(c[fenceLen(c):]) {
					break
				}
				// Inner lines are cut points only if the fence is too big.
				o.marks = append(o.marks, mark{lines[end].start, levelLine})
			}
			stop := len(src)
			if end < len(lines) {
				stop = lines[end].end
				o.marks = append(o.marks, mark{lines[end].start, levelNever})
				// The blank lines after the fence belong to it: the closing
				// fence's token may run over them.
				for b := end + 1; b < len(lines) && isBlank(text(b)); b++ {
					stop = lines[b].end
				}
			}
			o.spans = append(o.spans, span{ln.start, stop})
			k = end
			newBlock, prevPara, inQuote = true, false, false
			continue
		case atxLevel(trimmed) > 0:
			n := atxLevel(trimmed)
			o.marks = append(o.marks, mark{ln.start, headingLevel})
			openHeading(ln.start, n, atxTitle(trimmed[n:]))
			newBlock, prevPara, inQuote, afterHeading = true, false, false, true
			continue
		case prevPara && isSetextUnderline(t):
			// The previous line was the heading text: re-mark it.
			prev := lines[k-1]
			for m := len(o.marks) - 1; m >= 0 && o.marks[m].off == prev.start; m-- {
				if !wasHeading {
					o.marks[m].level = levelHeading
				}
			}
			o.spans = append(o.spans, span{prev.start, ln.end})
			lvl := 2
			if strings.TrimSpace(t)[0] == '=' {
				lvl = 1
			}
			openHeading(prev.start, lvl, strings.TrimSpace(text(k-1)))
			o.marks = append(o.marks, mark{ln.start, levelNever})
			newBlock, prevPara, afterHeading = true, false, true
			continue
		case isThematicBreak(trimmed):
			o.marks = append(o.marks, mark{ln.start, levelBlock})
			newBlock, prevPara = true, false
			continue
		case strings.Contains(t, "|") && k+1 < len(lines) && isTableDelimiter(text(k+1)):
			o.marks = append(o.marks, mark{ln.start, levelBlock})
			o.spans = append(o.spans, ln)
			for k+1 < len(lines) && !isBlank(text(k+1)) && strings.Contains(text(k+1), "|") {
				k++
				o.marks = append(o.marks, mark{lines[k].start, levelLine})
				o.spans = append(o.spans, lines[k])
			}
			newBlock, prevPara = true, false
			continue
		case isListItem(trimmed):
			level = min(level, levelBlock)
		case strings.HasPrefix(trimmed, ">"):
			if !inQuote {
				level = levelBlock
			}
			inQuote = true
		}
		o.marks = append(o.marks, mark{ln.start, level})
		newBlock, prevPara = false, true
	}
	return o
}

func isBlank(s string) bool { return strings.TrimLeft(s, " \t\r") == "" }

// fenceLen is the number of leading ` or ~ characters (0 if fewer than 3).
func fenceLen(s string) int {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return 0
	}
	return n
}

func isFenceOpen(s string) bool {
	n := fenceLen(s)
	return n > 0 && (s[0] == '~' || !strings.Contains(s[n:], "`"))
}

func atxLevel(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0
	}
	return n
}

// atxTitle strips the spaces and optional closing #s of a heading.
func atxTitle(s string) string {
	s = strings.TrimSpace(s)
	t := strings.TrimRight(s, "#")
	if t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t") {
		s = strings.TrimSpace(t)
	}
	return s
}

func isSetextUnderline(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && (strings.Trim(s, "=") == "" || strings.Trim(s, "-") == "")
}

func isThematicBreak(s string) bool {
	if s == "" || (s[0] != '-' && s[0] != '*' && s[0] != '_') {
		return false
	}
	n := 0
	for _, c := range s {
		switch {
		case c == rune(s[0]):
			n++
		case c != ' ' && c != '\t':
			return false
		}
	}
	return n >= 3
}

func isListItem(s string) bool {
	i := 0
	switch {
	case s == "":
		return false
	case s[0] == '-' || s[0] == '*' || s[0] == '+':
		i = 1
	default:
		for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(s) || (s[i] != '.' && s[i] != ')') {
			return false
		}
		i++
	}
	return i == len(s) || s[i] == ' ' || s[i] == '\t'
}

// isTableDelimiter matches a GFM table delimiter row like |---|:--:|.
func isTableDelimiter(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || !strings.Contains(s, "-") {
		return false
	}
	cells := strings.Split(strings.Trim(s, "|"), "|")
	for _, c := range cells {
		c = strings.TrimSpace(c)
		c = strings.TrimPrefix(c, ":")
		c = strings.TrimSuffix(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return strings.Contains(s, "|") || len(cells) > 1
}
