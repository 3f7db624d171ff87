package voice

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitter cuts the model's streamed text into sentences as they complete,
// so the first one is spoken while the rest is still being generated.
type splitter struct {
	buf strings.Builder
}

// maxClause: a sentence this long without an end is cut at its last comma
// or space, so a run-on answer still starts playing.
const maxClause = 240

// abbreviations end in a period without ending the sentence.
var abbreviations = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "st": true, "prof": true,
	"jr": true, "sr": true, "vs": true, "etc": true, "e.g": true, "i.e": true, "no": true, "approx": true, "inc": true, "a.m": true, "p.m": true}

// push adds a delta and returns the sentences it completed.
func (s *splitter) push(delta string) []string {
	s.buf.WriteString(delta)
	var out []string
	for {
		text := s.buf.String()
		cut := sentenceEnd(text)
		if cut < 0 && len(text) > maxClause {
			cut = clauseEnd(text)
		}
		if cut < 0 {
			return out
		}
		if t := strings.TrimSpace(text[:cut]); t != "" {
			out = append(out, t)
		}
		s.buf.Reset()
		s.buf.WriteString(text[cut:])
	}
}

// flush returns what is left once the answer is complete.
func (s *splitter) flush() []string {
	t := strings.TrimSpace(s.buf.String())
	s.buf.Reset()
	if t == "" {
		return nil
	}
	return []string{t}
}

// sentenceEnd is the index just past the first sentence end followed by
// white space ([.!?…] and closing quotes, or a line break), -1 if none yet.
// Offsets are the text's own bytes (invalid UTF-8 counts one byte a rune).
func sentenceEnd(text string) int {
	for pos := 0; pos < len(text); {
		r, size := utf8.DecodeRuneInString(text[pos:])
		if r == '\n' && strings.TrimSpace(text[:pos]) != "" {
			return pos + size
		}
		if r == '.' || r == '!' || r == '?' || r == '…' {
			end := pos + size
			for end < len(text) {
				q, n := utf8.DecodeRuneInString(text[end:])
				if !strings.ContainsRune(`.!?"')”’`, q) {
					break
				}
				end += n
			}
			if end < len(text) {
				next, _ := utf8.DecodeRuneInString(text[end:])
				if unicode.IsSpace(next) && !(r == '.' && abbreviation([]rune(text[:pos]))) {
					return end
				}
			}
		}
		pos += size
	}
	return -1
}

// abbreviation reports whether the word before a period is a known
// abbreviation or a single letter (an initial).
func abbreviation(before []rune) bool {
	i := len(before)
	for i > 0 && !unicode.IsSpace(before[i-1]) {
		i--
	}
	w := strings.ToLower(strings.Trim(string(before[i:]), `"'(`))
	return abbreviations[w] || (len([]rune(w)) == 1 && unicode.IsLetter([]rune(w)[0]))
}

// clauseEnd cuts a long run after its last comma, else its last space.
func clauseEnd(text string) int {
	if i := strings.LastIndex(text[:maxClause], ", "); i > 0 {
		return i + 1
	}
	if i := strings.LastIndex(text[:maxClause], " "); i > 0 {
		return i
	}
	cut := maxClause
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return cut
}
