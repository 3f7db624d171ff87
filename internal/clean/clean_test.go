package clean

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanPhone(t *testing.T) {
	cases := []struct {
		in, want string
		valid    bool
	}{
		{"+14155550100", "+14155550100", true},
		{" +1 (415) 555-0100 ", "+14155550100", true},
		{"\u200b+44\u00a020.7946.0958\ufeff", "+442079460958", true},
		{"+49\u2011151\u201312345678", "+4915112345678", true},
		{"\uff0b33612345678", "+33612345678", true},
		{"+\u200d1\u200c2", "+12", true},
		{"14155550100", "14155550100", false},
		{"+04155550100", "+04155550100", false},
		{"+1", "+1", false},
		{"+1234567890123456", "+1234567890123456", false},
		{"+1415555010a", "+1415555010a", false},
		{"+١٢٣٤", "+١٢٣٤", false}, // Arabic-Indic digits are not E.164
		{"", "", false},
	}
	for _, c := range cases {
		got := Phone(c.in)
		if got != c.want {
			t.Errorf("Phone(%q) = %q, want %q", c.in, got, c.want)
		}
		if IsE164(got) != c.valid {
			t.Errorf("IsE164(%q) = %v, want %v", got, !c.valid, c.valid)
		}
	}
}

func TestCleanString(t *testing.T) {
	cases := map[string]string{
		"  Ada Lovelace\u200b ":   "Ada Lovelace",
		"\ufeffacme\u2060 corp":   "acme corp",
		"\u00a0x\u00a0":           "x",
		"line1\nline2":            "line1\nline2",
		"\u3164":                  "",
		"caf\u00e9 \u202eevil":    "caf\u00e9 evil",
		"ok":                      "ok",
		"a\x00b\x07c":             "abc",
		"\U000E0041tag\U000E007F": "tag",
	}
	for in, want := range cases {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCleanPhone checks the invariants of the cleaning: idempotent, never
// leaves invisible characters, valid UTF-8 in gives valid UTF-8 out, and a
// valid E.164 result is pure ASCII of the right shape.
func FuzzCleanPhone(f *testing.F) {
	for _, s := range []string{"+14155550100", " +1 (415) 555-0100", "\u200b+44 20 7946 0958\ufeff", "\uff0b1-800", "+", "", "\u3164\u2800"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Phone(s)
		if Phone(p) != p {
			t.Fatalf("cleanPhone not idempotent on %q: %q", s, p)
		}
		if strings.IndexFunc(p, invisible) >= 0 || strings.ContainsAny(p, " .-()") {
			t.Fatalf("Phone(%q) = %q keeps removable characters", s, p)
		}
		if utf8.ValidString(s) && !utf8.ValidString(p) {
			t.Fatalf("Phone(%q) produced invalid UTF-8", s)
		}
		if IsE164(p) && (len(p) > 16 || p[0] != '+') {
			t.Fatalf("validE164 accepted %q", p)
		}
		c := String(s)
		if String(c) != c {
			t.Fatalf("cleanString not idempotent on %q: %q", s, c)
		}
		if strings.IndexFunc(c, invisible) >= 0 || strings.TrimSpace(c) != c {
			t.Fatalf("String(%q) = %q", s, c)
		}
	})
}
