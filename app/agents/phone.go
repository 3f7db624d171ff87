package agents

import (
	"slices"
	"strings"
	"unicode"
)

// validatePhones cleans and checks phone numbers: E.164, unique, and only
// on voice agents.
func validatePhones(typ string, phones []string) ([]string, error) {
	if len(phones) == 0 {
		return []string{}, nil
	}
	if typ != "voice" {
		return nil, invalidf("phoneNumbers", "only voice agents have phone numbers")
	}
	if len(phones) > maxPhones {
		return nil, invalidf("phoneNumbers", "at most %d numbers", maxPhones)
	}
	out := make([]string, 0, len(phones))
	for i, p := range phones {
		path := "phoneNumbers." + itoa(i)
		c := cleanPhone(p)
		if !validE164(c) {
			return nil, invalidf(path, "%q is not an E.164 number (+ then 2 to 15 digits, e.g. +14155550100)", p)
		}
		if slices.Contains(out, c) {
			return nil, invalidf(path, "%s is listed twice", c)
		}
		out = append(out, c)
	}
	return out, nil
}

// cleanPhone drops invisible characters, whitespace anywhere, dots, dashes
// (ASCII and Unicode) and parentheses, so "+1 (415) 555-0100" becomes
// "+14155550100"; a full-width plus becomes '+'. It does not guess a country
// code: the result still has to pass validE164. Same rule as the call
// endpoints' (app/phone.go), so a number an agent accepts can be dialled.
func cleanPhone(s string) string {
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

// invisible reports whether r renders as nothing: format characters,
// control characters other than tab and newlines, and the "blank" letters
// some tools paste as filler.
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

// validE164 reports whether s matches ^\+[1-9]\d{1,14}$ (ASCII digits only).
func validE164(s string) bool {
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
