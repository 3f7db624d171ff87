package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/agenttest"
)

// testFile has one scenario the builtin agent passes (it quotes the hours
// source) and one it fails; the judge is skipped without a model.
const testFile = `
scenarios:
  - name: opening hours
    turns:
      - user: When does the bakery open?
        expect:
          contains: ["7:00"]
          notContains: ["pizza"]
          cites: [hours]
          judge: Does the answer give the opening time?
  - name: sells pizza
    turns:
      - user: When does the bakery open?
        expect:
          contains: ["pizza"]
          cites: [returns-nope]
`

func TestAgentTestsBuiltin(t *testing.T) {
	e := newConvEnv(t, false, nil)
	code, _, b := e.do("POST", "/api/v1/agents/"+e.agentID+"/tests", e.key, testFile)
	if code != 200 {
		t.Fatalf("tests: %d %s", code, b)
	}
	var out struct{ Data agenttest.Report }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	r := out.Data
	if r.Passed != 1 || r.Failed != 1 || len(r.Scenarios) != 2 || !r.Scenarios[0].Passed || r.Scenarios[1].Passed {
		t.Fatalf("report %s", b)
	}
	if sk := r.Scenarios[0].Turns[0].Skipped; len(sk) != 1 || !strings.Contains(sk[0], "builtin") {
		t.Errorf("judge with builtin: %v", sk)
	}
	if f := r.Scenarios[1].Turns[0].Failures; len(f) != 2 || !strings.Contains(f[0], `"pizza"`) || !strings.Contains(f[1], "returns-nope") {
		t.Errorf("failures %v", f)
	}

	// A bad file is a 400 naming the path; another organization's agent is 404.
	if code, _, b := e.do("POST", "/api/v1/agents/"+e.agentID+"/tests", e.key, "scenarios:\n  - name: x\n    turns: []\n"); code != 400 || !strings.Contains(string(b), "scenarios[0].turns") {
		t.Errorf("bad file: %d %s", code, b)
	}
	_, otherKey := e.newOrg("Other")
	if code, _, b := e.do("POST", "/api/v1/agents/"+e.agentID+"/tests", otherKey, testFile); code != 404 {
		t.Errorf("another org's agent: %d %s", code, b)
	}
}
