package voice

import (
	"slices"
	"strings"
	"testing"
)

// The model's text is cut into sentences as it streams, whatever the
// pieces it arrives in.
func TestSplitter(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Of course. What size? We have small and large cakes!", []string{"Of course.", "What size?", "We have small and large cakes!"}},
		{"Dr. Smith opens at 7.30 a.m. on Mondays. See you.", []string{"Dr. Smith opens at 7.30 a.m. on Mondays.", "See you."}},
		{"J. R. R. Tolkien wrote it. \"Really?\" she asked.", []string{"J. R. R. Tolkien wrote it.", "\"Really?\"", "she asked."}},
		{"First line\nSecond line", []string{"First line", "Second line"}},
		{strings.Repeat("word, ", 60) + "end.", nil},
	} {
		for _, step := range []int{1, 3, 1000} {
			var sp splitter
			var got []string
			for i := 0; i < len(c.text); i += step {
				got = append(got, sp.push(c.text[i:min(len(c.text), i+step)])...)
			}
			got = append(got, sp.flush()...)
			if c.want == nil {
				if strings.Join(got, " ") != strings.TrimSpace(c.text) || len(got) < 2 {
					t.Errorf("long run in %d-byte pieces: %q", step, got)
				}
				continue
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%q in %d-byte pieces: %q, want %q", c.text, step, got, c.want)
			}
		}
	}
}

// FuzzSplitter: any text, cut anywhere, comes out whole (only white space
// between sentences is lost) and never as an empty sentence.
func FuzzSplitter(f *testing.F) {
	f.Add("Hello there. How are you? Fine!", 3)
	f.Add("Dr. No…  \"Yes!\" x", 1)
	f.Add(strings.Repeat("é, ", 200), 7)
	f.Fuzz(func(t *testing.T, text string, step int) {
		step = max(1, step%64)
		var sp splitter
		var got []string
		for i := 0; i < len(text); i += step {
			got = append(got, sp.push(text[i:min(len(text), i+step)])...)
		}
		got = append(got, sp.flush()...)
		if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(text), " ") {
			t.Fatalf("%q came out as %q", text, got)
		}
		for _, s := range got {
			if strings.TrimSpace(s) == "" {
				t.Fatalf("empty sentence from %q", text)
			}
		}
	})
}
