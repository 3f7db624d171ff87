package test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// TestAgentTestCLI runs `agentd test` against a builtin agent with one
// passing and one failing scenario: the report, exit status 1 and the
// JUnit file.
func TestAgentTestCLI(t *testing.T) {
	dir := t.TempDir()
	s := start(t, dir)
	key := s.newOrg("agenttests")
	coll := dataID(t, s.must("POST", "/api/v1/kb/collections", key, map[string]any{"name": "FAQ"}))
	s.must("POST", "/api/v1/kb/sources", key, map[string]any{"collectionId": coll, "externalId": "hours", "title": "Opening hours",
		"content": "# Opening hours\n\nThe Lisbon bakery opens at 7:00 and closes at 19:00 from Monday to Saturday."})
	var r resp
	if !testkit.Within(30*time.Second, func() bool {
		r = s.must("GET", "/api/v1/kb/sources?collectionId="+coll, key, nil)
		return strings.Contains(string(r.body), `"completed"`)
	}) {
		t.Fatalf("source not processed: %s", r.body)
	}
	agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Baker", "type": "chat",
		"instructions": "Answer from the FAQ.", "knowledge": map[string]any{"collectionIds": []string{coll}}}))
	file := filepath.Join(dir, "tests.yaml")
	os.WriteFile(file, []byte(`scenarios:
  - name: opening hours
    turns:
      - user: When does the bakery open?
        expect: {contains: ["7:00"], cites: [hours], judge: "Is the opening time given?"}
  - name: sells pizza
    turns:
      - user: When does the bakery open?
        expect: {contains: [pizza]}
`), 0o600)
	junit := filepath.Join(dir, "junit.xml")
	out, errOut, err := testbin.Run(agentdBin, dir, nil, "test", "--agent", agent, file, "--server", s.URL, "--api-key", key, "--junit", junit)
	if err == nil || !strings.Contains(errOut, "1 of 2 scenarios failed") {
		t.Fatalf("exit: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	for _, want := range []string{"PASS  opening hours", "FAIL  sells pizza", `contains "pizza": not in the answer`, "skipped judge", "1 passed, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &x); err != nil || len(x.Suites) != 1 {
		t.Fatalf("junit %v:\n%s", err, b)
	}
	su := x.Suites[0]
	if su.Tests != 2 || su.Failures != 1 || su.Cases[0].Failure != nil || su.Cases[1].Failure == nil ||
		!strings.Contains(su.Cases[1].Failure.Message, "pizza") {
		t.Fatalf("junit:\n%s", b)
	}
	// All passing: exit status 0.
	os.WriteFile(file, []byte(`{"scenarios":[{"name":"hours","turns":[{"user":"When does the bakery open?","expect":{"contains":["7:00"]}}]}]}`), 0o600)
	if out, errOut, err := testbin.Run(agentdBin, dir, nil, "test", "--agent", agent, file, "--server", s.URL, "--api-key", key); err != nil {
		t.Fatalf("passing file: %v\n%s%s", err, out, errOut)
	}
}
