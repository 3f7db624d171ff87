package dnc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/internal/clean"
)

// FuzzRead: any file reads without panic; every number read is E.164 and
// listed once, lines rise, and every line is either read, a problem, or
// skipped (blank, comment, header).
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("+14155550100\n+1 (415) 555-0101\r\n# note\n\n"))
	f.Add([]byte("phone,reason\n+14155550100,\"asked, twice\"\n\"+1415555\n"))
	f.Add([]byte("a;b;c\n;;\n\t\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, problems, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		last := 0
		for _, l := range lines {
			if !clean.IsE164(l.Number) || seen[l.Number] {
				t.Fatalf("bad or repeated number %q", l.Number)
			}
			seen[l.Number] = true
			if l.Line <= last {
				t.Fatalf("line %d after %d", l.Line, last)
			}
			last = l.Line
		}
		if n := bytes.Count(data, []byte("\n")) + 1; len(lines)+len(problems) > n {
			t.Fatalf("%d numbers and %d problems from %d lines", len(lines), len(problems), n)
		}
	})
}
