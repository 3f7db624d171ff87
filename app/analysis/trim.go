package analysis

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultContextTokens is the model's context budget when the operator
// gives none (--llm-context-tokens), as for conversations.
const DefaultContextTokens = 8192

// bytesPerToken bounds how much of one message is ever tokenized: a cl100k
// token is rarely longer than this, so more bytes than budget×8 never fit.
const bytesPerToken = 8

// fitTranscript renders the transcript for the model within budget
// tokens (counted by count): the newest messages are kept, a message
// longer than the whole budget is cut, and a note says what was left out.
// Only about budget tokens are ever counted, however long the transcript.
func fitTranscript(count func(string) int, budget int, turns []Turn) (text string, trimmed bool) {
	const head = "Transcript:\n"
	budget = max(budget-count(head)-40, 64) // 40: the note
	left := budget
	var kept []string
	cut := false
	start := len(turns)
	for i := len(turns) - 1; i >= 0; i-- {
		line := fmt.Sprintf("%s: %s\n", turns[i].Role, turns[i].Text)
		if len(line) > budget*bytesPerToken {
			line, cut = prefix(line, budget*bytesPerToken)+" […]\n", true
		}
		n := count(line)
		for n > left && len(kept) == 0 && len(line) > 16 { // the last message alone is too long: cut it
			line, cut = prefix(line, len(line)/2)+" […]\n", true
			n = count(line)
		}
		if n > left {
			break
		}
		left -= n
		kept = append(kept, line)
		start = i
	}
	var b strings.Builder
	b.WriteString(head)
	if start > 0 || cut {
		fmt.Fprintf(&b, "[The transcript was trimmed to fit the model's context: %d of its %d messages are left out", start, len(turns))
		if cut {
			b.WriteString(", and a long message is cut")
		}
		b.WriteString(".]\n")
	}
	for i := len(kept) - 1; i >= 0; i-- {
		b.WriteString(kept[i])
	}
	return b.String(), start > 0 || cut
}

// prefix is s cut to at most n bytes on a character boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
