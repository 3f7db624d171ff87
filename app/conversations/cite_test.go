package conversations

import "testing"

// Only the passages an answer cites as [n] are its citations.
func TestCited(t *testing.T) {
	cs := []Citation{{SourceID: "a"}, {SourceID: "b"}, {SourceID: "c"}}
	for _, c := range []struct {
		answer string
		want   string
	}{
		{"We open at 7:00 [2].", "b"},
		{"Yes [3][1], see [1, 2].", "abc"},
		{"No sources here.", ""},
		{"Out of range [4] [0] [99999] and a link [x](y).", ""},
		{"Arrays like a[1] count too.", "a"},
	} {
		got := ""
		for _, x := range cited(c.answer, cs) {
			got += x.SourceID
		}
		if got != c.want {
			t.Errorf("%q: cited %q, want %q", c.answer, got, c.want)
		}
	}
}
