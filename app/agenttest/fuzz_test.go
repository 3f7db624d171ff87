package agenttest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// FuzzParse: any test file is parsed within a second (alias bombs
// included: 10^5 nodes from 5 anchors of 10 aliases each), and refused
// with an error or gives a suite whose every scenario has a name and 1 to 50
// turns with a user message; an accepted suite parses again from its own JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"scenarios:\n  - name: a\n    turns:\n      - user: hi\n        expect: {contains: [x], cites: [y], callsTool: {name: t, arguments: {n: 1}}, judge: ok?}\n",
		`{"scenarios":[{"name":"a","turns":[{"user":"hi"}]}]}`,
		"scenarios: &a [*a]\n", "a: b: c", "- 1\n- 2", "scenarios:\n  - name: a\n    turns: []\n",
		"{1: 2}", "", "null", "scenarios:\n  - name: a\n    turns:\n      - user: hi\n        expect: {bogus: 1}\n",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte("x: &a \"" + strings.Repeat("A", 20<<10) + "\"\nscenarios: [" + strings.Repeat("*a,", 5000) + "*a]\n")) // 100 MB expanded
	f.Add([]byte("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		began := time.Now()
		s, err := Parse(b)
		if d := time.Since(began); d > time.Second {
			t.Fatalf("Parse of %d bytes took %s (bound 1 s)", len(b), d)
		}
		if err != nil {
			return
		}
		for _, sc := range s.Scenarios {
			if sc.Name == "" || len(sc.Turns) == 0 || len(sc.Turns) > maxTurns {
				t.Fatalf("accepted scenario %+v", sc)
			}
		}
		j, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(j); err != nil {
			t.Fatalf("accepted suite %s refused after a round trip: %v", j, err)
		}
	})
}
