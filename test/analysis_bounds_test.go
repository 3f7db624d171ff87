package test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// schemaBomb is levels of allOf, each naming the next level twice: 2^levels
// evaluations, about 65 bytes a level (30 levels: 2 KB).
func schemaBomb(levels int) map[string]any {
	defs := map[string]any{}
	for i := range levels {
		next := fmt.Sprintf("#/$defs/d%d", i+1)
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{map[string]any{"$ref": next}, map[string]any{"$ref": next}}}
	}
	defs[fmt.Sprintf("d%d", levels)] = map[string]any{"type": "string"}
	return map[string]any{"$defs": defs, "$ref": "#/$defs/d0"}
}

// TestAnalysisSchemaBombRefused: an analysisPlan whose schema expands to
// 2^30 nodes is a 400 VALIDATION_ERROR naming the field and the bound, at
// the agent's create and update, quickly, and nothing is stored.
func TestAnalysisSchemaBombRefused(t *testing.T) {
	s := start(t, t.TempDir())
	key := s.newOrg("schemabomb")
	bomb := map[string]any{"structuredData": map[string]any{"schema": schemaBomb(30)}}
	began := time.Now()
	r := s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Bomb", "type": "chat", "instructions": "x", "analysisPlan": bomb})
	e, _ := r.json()["error"].(map[string]any)
	if r.status != 400 || e["code"] != "VALIDATION_ERROR" || !strings.Contains(fmt.Sprint(e["message"]), "analysisPlan.structuredData.schema") ||
		!strings.Contains(fmt.Sprint(e["message"]), "10000") {
		t.Fatalf("create with a schema bomb: %d %s", r.status, trunc(r.body))
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("refused in %s", d)
	}
	if l := s.must("GET", "/api/v1/agents", key, nil); strings.Contains(string(l.body), `"Bomb"`) {
		t.Fatalf("a refused agent was stored: %s", trunc(l.body))
	}
	id := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Fine", "type": "chat", "instructions": "x",
		"analysisPlan": map[string]any{"summary": map[string]any{"enabled": true}}}))
	r = s.must("PATCH", "/api/v1/agents/"+id, key, map[string]any{"name": "Changed", "analysisPlan": bomb})
	if r.status != 400 || !strings.Contains(string(r.body), "analysisPlan.structuredData.schema") {
		t.Fatalf("update with a schema bomb: %d %s", r.status, trunc(r.body))
	}
	g := s.must("GET", "/api/v1/agents/"+id, key, nil)
	if !strings.Contains(string(g.body), `"Fine"`) || strings.Contains(string(g.body), "$defs") {
		t.Fatalf("a refused update changed the agent: %s", trunc(g.body))
	}
}

// TestAnalysisIsolationAndShutdown: beside an analysis hanging on a slow
// model (organization "slow") and a schema bomb already in the database
// (organization "bomb", saved before the bound), another organization's
// analysis completes within seconds; SIGTERM then stops agentd within
// --shutdown-timeout while the slow analysis still hangs.
func TestAnalysisIsolationAndShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agentd and a scripted model")
	}
	model := llmtest.New(t)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		all := r.All()
		switch {
		case !strings.Contains(all, "You analyse a finished conversation"):
			return llmtest.Reply{Content: "Noted."}
		case strings.Contains(all, "slow organization"):
			return llmtest.Reply{Delay: 5 * time.Minute}
		case strings.Contains(all, "bomb organization"):
			return llmtest.Reply{Content: `{"structuredData": "x"}`}
		}
		return llmtest.Reply{Content: `{"summary": "A quick chat."}`}
	})
	dir := t.TempDir()
	s := start(t, dir, "--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted", "--shutdown-timeout", "3s")
	summary := map[string]any{"summary": map[string]any{"enabled": true}}
	conv := func(org, text string, plan map[string]any) (key, convID string) {
		key = s.newOrg(org)
		agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": org, "type": "chat", "instructions": "x", "analysisPlan": plan}))
		convID = dataID(t, s.must("POST", "/api/v1/conversations", key, map[string]any{"agentId": agent}))
		if r := s.must("POST", "/api/v1/conversations/"+convID+"/messages", key, map[string]any{"content": text}); r.status != 200 {
			t.Fatalf("message: %d %s", r.status, trunc(r.body))
		}
		if org == "bomb" { // as saved before the bound: straight into the store
			storeBomb(t, s.db, agent)
		}
		return key, convID
	}
	slowKey, slowConv := conv("slow", "the slow organization", summary)
	bombKey, bombConv := conv("bomb", "the bomb organization", map[string]any{"structuredData": map[string]any{"schema": map[string]any{"type": "string"}}})
	fastKey, fastConv := conv("fast", "hello", summary)
	for _, c := range [][2]string{{slowKey, slowConv}, {bombKey, bombConv}} {
		s.must("POST", "/api/v1/conversations/"+c[1]+"/end", c[0], nil)
	}
	status := func(key, id string) string {
		st, _ := s.must("GET", "/api/v1/conversations/"+id+"/analysis", key, nil).json()["data"].(map[string]any)["status"].(string)
		return st
	}
	// Until the slow one is with the model and the bomb is with the model
	// or refused (its plan no longer parses).
	testkit.Within(10*time.Second, func() bool {
		return analysisRequests(model) >= 1 && (analysisRequests(model) >= 2 || status(bombKey, bombConv) != "pending")
	})
	began := time.Now()
	s.must("POST", "/api/v1/conversations/"+fastConv+"/end", fastKey, nil)
	if !testkit.Within(5*time.Second, func() bool { return status(fastKey, fastConv) == "completed" }) {
		t.Fatalf("the other organization's analysis is %q after %s", status(fastKey, fastConv), time.Since(began))
	}
	t.Logf("the other organization's analysis completed in %s", time.Since(began).Round(time.Millisecond))
	if st := status(bombKey, bombConv); st != "failed" {
		t.Errorf("stored schema bomb's analysis: %s", st)
	}
	if st := status(slowKey, slowConv); st != "pending" {
		t.Errorf("slow analysis: %s", st)
	}
	began = time.Now()
	err := s.Stop(10 * time.Second)
	if d := time.Since(began); d > 4*time.Second {
		t.Fatalf("SIGTERM took %s with --shutdown-timeout 3s (exit %v)", d, err)
	}
	t.Logf("stopped in %s (exit %v)", time.Since(began).Round(time.Millisecond), err)
}

// storeBomb writes a schema bomb as the agent's plan, bypassing the API.
func storeBomb(t *testing.T, db, agentID string) {
	t.Helper()
	driver, dsn := "sqlite", "file:"+db+"?_pragma=busy_timeout(5000)"
	if dbtest.Postgres() {
		driver, dsn = "pgx", db
	}
	d, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	schema, _ := json.Marshal(schemaBomb(30))
	plan := `{"structuredData":{"schema":` + string(schema) + `}}`
	if _, err := d.Exec("UPDATE agent_analysis_plans SET plan = $1 WHERE agent_id = $2", plan, agentID); err != nil {
		t.Fatal(err)
	}
}

// TestAnalysisModelRefusalNotRetried: a 400 "context too long" from the
// model ends the analysis as failed, naming the status, and is not asked
// again.
func TestAnalysisModelRefusalNotRetried(t *testing.T) {
	model := llmtest.New(t)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.All(), "You analyse a finished conversation") {
			return llmtest.Reply{Status: 400}
		}
		return llmtest.Reply{Content: "Noted."}
	})
	s := start(t, t.TempDir(), "--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted")
	key := s.newOrg("refusal")
	agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": "a", "type": "chat", "instructions": "x",
		"analysisPlan": map[string]any{"summary": map[string]any{"enabled": true}}}))
	conv := dataID(t, s.must("POST", "/api/v1/conversations", key, map[string]any{"agentId": agent}))
	s.must("POST", "/api/v1/conversations/"+conv+"/messages", key, map[string]any{"content": "hello"})
	s.must("POST", "/api/v1/conversations/"+conv+"/end", key, nil)
	var a map[string]any
	testkit.Within(10*time.Second, func() bool {
		a, _ = s.must("GET", "/api/v1/conversations/"+conv+"/analysis", key, nil).json()["data"].(map[string]any)
		return a["status"] != "pending"
	})
	if a["status"] != "failed" || !strings.Contains(fmt.Sprint(a["error"]), "status 400") {
		t.Fatalf("analysis after a 400: %v", a)
	}
	// The old worker asked again after 2 s: nothing may ask in 3.
	testkit.Never(t, 3*time.Second, func() bool { return analysisRequests(model) != 1 }, "the model was asked again after a 400")
}

// yamlBomb is a test file of about 91 KB: one 31 KB anchor used 20,000
// times (3.9 GB expanded before the bound).
func yamlBomb() []byte {
	var b strings.Builder
	b.WriteString("x: &a \"" + strings.Repeat("A", 31<<10) + "\"\nscenarios:\n  - name: bomb\n    turns:\n      - user: hi\n        expect:\n          contains: [")
	for i := range 20000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("*a")
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// TestAgentTestYAMLBomb: seven agent-test files of 91 KB with one 31 KB
// anchor used 20,000 times, sent at once, are each a 400 naming the
// alias bound, quickly, and agentd's peak resident memory stays under
// 400 MB; a file beyond the size bound is refused unread; agentd test
// refuses the same file before calling the server.
func TestAgentTestYAMLBomb(t *testing.T) {
	dir := t.TempDir()
	s := start(t, dir)
	key := s.newOrg("yamlbomb")
	agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": "a", "type": "chat", "instructions": "x"}))
	bomb := yamlBomb()
	began := time.Now()
	var wg sync.WaitGroup
	res := make([]resp, 7)
	for i := range res {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = s.must("POST", "/api/v1/agents/"+agent+"/tests", key, bomb) }()
	}
	wg.Wait()
	took := time.Since(began)
	for _, r := range res {
		if r.status != 400 || !strings.Contains(string(r.body), "YAML aliases") {
			t.Fatalf("YAML bomb: %d %s", r.status, trunc(r.body))
		}
	}
	peak := s.peakKB()
	t.Logf("7 YAML bombs of %d bytes refused in %s; agentd peak resident %d MB", len(bomb), took.Round(time.Millisecond), peak>>10)
	if peak == 0 || peak > 400<<10 {
		t.Fatalf("agentd peak resident memory %d KB (max 400 MB)", peak)
	}
	if took > 5*time.Second {
		t.Errorf("refused in %s", took)
	}
	big := []byte("scenarios: []\n#" + strings.Repeat("x", 2<<20))
	if r := s.must("POST", "/api/v1/agents/"+agent+"/tests", key, big); r.status != 413 && r.status != 400 {
		t.Fatalf("a 2 MB test file: %d %s", r.status, trunc(r.body))
	}
	file := dir + "/bomb.yaml"
	os.WriteFile(file, bomb, 0o600)
	out, errOut, err := testbin.Run(agentdBin, dir, nil, "test", "--agent", agent, file, "--server", s.URL, "--api-key", key)
	if err == nil || !strings.Contains(errOut, "YAML aliases") {
		t.Fatalf("agentd test on a YAML bomb: %v\n%s%s", err, out, errOut)
	}
}

// TestAnalysisSIGTERMWhileBusy: with one analysis hanging on a slow model
// and another validating against a schema bomb already in the database,
// SIGTERM stops agentd within --shutdown-timeout.
func TestAnalysisSIGTERMWhileBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agentd and a scripted model")
	}
	model := llmtest.New(t)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		switch all := r.All(); {
		case !strings.Contains(all, "You analyse a finished conversation"):
			return llmtest.Reply{Content: "Noted."}
		case strings.Contains(all, "slow organization"):
			return llmtest.Reply{Delay: 5 * time.Minute}
		}
		return llmtest.Reply{Content: `{"structuredData": "x"}`}
	})
	s := start(t, t.TempDir(), "--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted", "--shutdown-timeout", "3s")
	asked := func(org string) bool {
		for _, r := range model.Got() {
			if strings.Contains(r.All(), "the "+org+" organization") && strings.Contains(r.All(), "You analyse") {
				return true
			}
		}
		return false
	}
	for _, org := range []string{"bomb", "slow"} {
		key := s.newOrg(org)
		agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": org, "type": "chat", "instructions": "x",
			"analysisPlan": map[string]any{"summary": map[string]any{"enabled": true}}}))
		conv := dataID(t, s.must("POST", "/api/v1/conversations", key, map[string]any{"agentId": agent}))
		s.must("POST", "/api/v1/conversations/"+conv+"/messages", key, map[string]any{"content": "the " + org + " organization"})
		if org == "bomb" {
			storeBomb(t, s.db, agent)
		}
		s.must("POST", "/api/v1/conversations/"+conv+"/end", key, nil)
		// Until the model has the analysis (or, the bomb refused, it ended).
		testkit.Within(10*time.Second, func() bool {
			st, _ := s.must("GET", "/api/v1/conversations/"+conv+"/analysis", key, nil).json()["data"].(map[string]any)["status"].(string)
			return asked(org) || st != "pending"
		})
	}
	if !asked("slow") {
		t.Fatal("the slow analysis never reached the model")
	}
	began := time.Now()
	err := s.Stop(15 * time.Second)
	if d := time.Since(began); d > 4*time.Second {
		t.Fatalf("SIGTERM took %s with --shutdown-timeout 3s (exit %v)", d, err)
	}
	t.Logf("stopped in %s (exit %v)", time.Since(began).Round(time.Millisecond), err)
}
