package sqldb

import (
	"strconv"
	"strings"
	"sync"
)

// The stores write their queries once, with SQLite's ? placeholders; on
// PostgreSQL the connection (pgdriver.go) rewrites each query text to $1,
// $2, ... once and caches the result, so no call site knows the dialect
// unless its SQL itself differs.

var rewritten sync.Map // query text -> PostgreSQL text

// pgQuery returns query with every ? or ?NNN placeholder outside string literals,
// quoted identifiers, comments and dollar-quoted bodies numbered $1, $2, ...
func pgQuery(query string) string {
	if v, ok := rewritten.Load(query); ok {
		return v.(string)
	}
	out := rewritePlaceholders(query)
	rewritten.Store(query, out)
	return out
}

func rewritePlaceholders(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := skipQuoted(q, i, c)
			b.WriteString(q[i:j])
			i = j - 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end - 1
		case c == '$':
			end := skipDollar(q, i)
			b.WriteString(q[i:end])
			i = end - 1
		case c == '?':
			// ?NNN names parameter NNN; a bare ? takes the number after
			// the largest used so far (SQLite's rule).
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				k, _ := strconv.Atoi(q[i+1 : j])
				n = max(n, k)
				b.WriteByte('$')
				b.WriteString(q[i+1 : j])
				i = j - 1
				continue
			}
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// skipQuoted returns the index after the literal or identifier opened by
// quote at i (a doubled quote inside is part of it).
func skipQuoted(q string, i int, quote byte) int {
	for j := i + 1; j < len(q); j++ {
		if q[j] == quote {
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

// skipDollar returns the index after a dollar-quoted string starting at i
// ($$...$$ or $tag$...$tag$), or i+1 when the $ opens none ($1, a name).
func skipDollar(q string, i int) int {
	j := i + 1
	for j < len(q) && (q[j] == '_' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= 'A' && q[j] <= 'Z' ||
		j > i+1 && q[j] >= '0' && q[j] <= '9') {
		j++
	}
	if j >= len(q) || q[j] != '$' {
		return i + 1
	}
	tag := q[i : j+1]
	k := strings.Index(q[j+1:], tag)
	if k < 0 {
		return len(q)
	}
	return j + 1 + k + len(tag)
}
