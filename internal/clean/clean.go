// Package clean normalizes text pasted into the API (DECISIONS.md "Calls"):
// no-code automation tools send values with zero-width spaces, byte-order
// marks, non-breaking spaces and formatted phone numbers. Calls and agents
// (phone numbers) share these rules, so they live below both.
package clean

import (
	"strings"
	"unicode"
)

// invisible reports whether r renders as nothing: format characters (zero-width
// space/joiners, BOM, bidi marks, soft hyphen, word joiner), control characters
// other than tab and newlines, and the "blank" letters some tools use as filler.
func invisible(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800', '\uFFFC', '\u034F':
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// String strips invisible characters and surrounding whitespace.
func String(s string) string {
	if s == "" {
		return s
	}
	if strings.IndexFunc(s, invisible) >= 0 {
		s = strings.Map(func(r rune) rune {
			if invisible(r) {
				return -1
			}
			return r
		}, s)
	}
	return strings.TrimSpace(s)
}

// Phone cleans s like String and also drops whitespace anywhere,
// dots, dashes (ASCII and Unicode) and parentheses, so "+1 (415) 555-0100"
// becomes "+14155550100". A full-width plus becomes '+'. It does not guess a
// country code: the result still has to pass IsE164.
func Phone(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case invisible(r), unicode.IsSpace(r):
			return -1
		case r == '.', r == '-', r == '(', r == ')', r == '\u2212':
			return -1
		case r >= '\u2010' && r <= '\u2015': // hyphen .. horizontal bar
			return -1
		case r == '\uFF0B':
			return '+'
		}
		return r
	}, s)
}

// IsE164 reports whether s matches ^\+[1-9]\d{1,14}$ (ASCII digits only).
func IsE164(s string) bool {
	if len(s) < 3 || len(s) > 16 || s[0] != '+' || s[1] < '1' || s[1] > '9' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
