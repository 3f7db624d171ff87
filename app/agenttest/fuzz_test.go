package agenttest

import (
	"encoding/json"
	"testing"
)

// FuzzParse: any test file is refused with an error or gives a suite whose
// every scenario has a name and 1 to 50 turns with a user message; an
// accepted suite parses again from its own JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"scenarios:\n  - name: a\n    turns:\n      - user: hi\n        expect: {contains: [x], cites: [y], callsTool: {name: t, arguments: {n: 1}}, judge: ok?}\n",
		`{"scenarios":[{"name":"a","turns":[{"user":"hi"}]}]}`,
		"scenarios: &a [*a]\n", "a: b: c", "- 1\n- 2", "scenarios:\n  - name: a\n    turns: []\n",
		"{1: 2}", "", "null", "scenarios:\n  - name: a\n    turns:\n      - user: hi\n        expect: {bogus: 1}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
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
