package analysis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/convstore"
)

const summaryPlan = `{"summary":{"enabled":true}}`

// env is a database (SQLite, or PostgreSQL with AGENTD_TEST_POSTGRES) and
// a scripted model.
type env struct {
	db    *storage.Stores
	model *llmtest.Server
}

func newEnv(t *testing.T) *env {
	return &env{db: storetest.Fresh(t), model: llmtest.New(t)}
}

// service is the analysis service on the env's stores and model.
func (e *env) service(t *testing.T, cfg analysis.Config) *analysis.Service {
	t.Helper()
	m, err := llm.NewOpenAI(llm.OpenAIConfig{URL: e.model.URL, Model: "scripted", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = m
	if cfg.Poll == 0 {
		cfg.Poll = 20 * time.Millisecond
	}
	return analysis.New(analysis.Deps{Store: e.db.Analyses, Calls: e.db.Calls, Messages: e.db.Conversations}, cfg)
}

// org creates an organization with a chat agent under plan.
func (e *env) org(t *testing.T, name, plan string) (orgID, agentID string) {
	t.Helper()
	ctx := context.Background()
	o, err := e.db.Orgs.CreateOrg(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: o.ID, Name: "a", Type: "chat", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.Analyses.SavePlan(ctx, o.ID, a.ID, json.RawMessage(plan)); err != nil {
		t.Fatal(err)
	}
	return o.ID, a.ID
}

// ended stores a conversation of the agent with texts as its user
// messages and ends it, which queues its analysis.
func (e *env) ended(t *testing.T, orgID, agentID string, texts ...string) string {
	t.Helper()
	ctx := context.Background()
	c, _, err := e.db.Conversations.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: agentID, Channel: "api"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(texts); i += 200 {
		var msgs []convstore.Message
		for _, s := range texts[i:min(i+200, len(texts))] {
			msgs = append(msgs, convstore.Message{Role: "user", Content: s})
		}
		if _, err := e.db.Conversations.AppendTurn(ctx, orgID, c.ID, msgs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.Conversations.End(ctx, orgID, c.ID); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func (e *env) analysis(t *testing.T, orgID, convID string) analysisstore.Analysis {
	t.Helper()
	a, err := e.db.Analyses.Get(context.Background(), orgID, analysisstore.KindConversation, convID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitStatus polls until the analysis leaves pending or limit passes.
func (e *env) waitStatus(t *testing.T, orgID, convID string, limit time.Duration) analysisstore.Analysis {
	t.Helper()
	var a analysisstore.Analysis
	testkit.Within(limit, func() bool {
		a = e.analysis(t, orgID, convID)
		return a.Status != analysisstore.StatusPending
	})
	return a
}

func isAnalysis(r llmtest.Request) bool {
	return strings.Contains(r.All(), "You analyse a finished conversation")
}

// One organization's analysis hanging on the model never holds back
// another's: the worker fills a free slot as soon as the other is queued
// (before, it waited for its whole batch).
func TestSlowAnalysisHoldsBackNoOther(t *testing.T) {
	e := newEnv(t)
	slowOrg, slowAgent := e.org(t, "slow", summaryPlan)
	fastOrg, fastAgent := e.org(t, "fast", summaryPlan)
	e.model.Answer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.All(), "slow org") {
			return llmtest.Reply{Delay: time.Minute}
		}
		return llmtest.Reply{Content: `{"summary":"quick"}`}
	})
	s := e.service(t, analysis.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { s.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	slow := e.ended(t, slowOrg, slowAgent, "slow org here")
	testkit.Eventually(t, 10*time.Second, func() bool { return e.model.Requests.Load() != 0 }, "the slow analysis reached the model")
	began := time.Now()
	fast := e.ended(t, fastOrg, fastAgent, "hello")
	a := e.waitStatus(t, fastOrg, fast, 10*time.Second)
	if a.Status != analysisstore.StatusCompleted {
		t.Fatalf("the other organization's analysis is %s after %s beside a slow one", a.Status, time.Since(began))
	}
	t.Logf("other organization's analysis completed in %s", time.Since(began).Round(time.Millisecond))
	if st := e.analysis(t, slowOrg, slow).Status; st != analysisstore.StatusPending {
		t.Errorf("slow analysis %s", st)
	}
}

// Each analysis has its own deadline: one that runs past it is given up
// and retried later, not held until the model's own timeout.
func TestAnalysisDeadline(t *testing.T) {
	e := newEnv(t)
	org, agent := e.org(t, "acme", summaryPlan)
	e.model.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Minute} })
	s := e.service(t, analysis.Config{Deadline: 300 * time.Millisecond, RetryBase: time.Hour, RetryMax: time.Hour})
	id := e.ended(t, org, agent, "hello")
	began := time.Now()
	if n, err := s.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("run: %d %v", n, err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("an analysis with a 300 ms deadline ran %s", d)
	}
	a := e.analysis(t, org, id)
	if a.Status != analysisstore.StatusPending || a.Attempts != 1 || time.Until(a.DueAt) < 30*time.Minute {
		t.Fatalf("after its deadline: %s, %d attempts, due in %s", a.Status, a.Attempts, time.Until(a.DueAt))
	}
}

// Cancelling the worker's context (SIGTERM) stops it promptly while an
// analysis hangs on the model; the row stays pending for the next run.
func TestRunStopsWhileModelHangs(t *testing.T) {
	e := newEnv(t)
	org, agent := e.org(t, "acme", summaryPlan)
	e.model.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Minute} })
	s := e.service(t, analysis.Config{})
	id := e.ended(t, org, agent, "hello")
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { s.Run(ctx); close(stopped) }()
	testkit.Eventually(t, 10*time.Second, func() bool { return e.model.Requests.Load() != 0 }, "the analysis reached the model")
	began := time.Now()
	cancel()
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("Run did not return within 3 s of its context's end")
	}
	t.Logf("stopped in %s", time.Since(began).Round(time.Millisecond))
	if a := e.analysis(t, org, id); a.Status != analysisstore.StatusPending {
		t.Errorf("abandoned analysis %s", a.Status)
	}
}

// A 4xx from the model (a context too long, a bad key) is a failure that
// names the status, asked once; a 503 is retried, and only MaxAttempts
// times.
func TestModelRefusalFailsAndRetriesAreBounded(t *testing.T) {
	e := newEnv(t)
	org, agent := e.org(t, "acme", summaryPlan)
	e.model.Answer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.All(), "too long for you") {
			return llmtest.Reply{Status: 400}
		}
		return llmtest.Reply{Status: 503}
	})
	s := e.service(t, analysis.Config{RetryBase: time.Millisecond, RetryMax: time.Millisecond})
	refused := e.ended(t, org, agent, "too long for you")
	for range 3 {
		s.RunOnce(context.Background())
	}
	a := e.analysis(t, org, refused)
	var res analysis.Result
	json.Unmarshal(a.Result, &res)
	if a.Status != analysisstore.StatusFailed || !strings.Contains(res.Error, "status 400") || e.model.Requests.Load() != 1 {
		t.Fatalf("a 400 from the model: %s %q after %d requests", a.Status, res.Error, e.model.Requests.Load())
	}

	down := e.ended(t, org, agent, "hello")
	// Each retry is due 1 ms after the last attempt: run the worker until
	// the row is final, then a few more times (a final row is not retried).
	testkit.Eventually(t, 10*time.Second, func() bool {
		s.RunOnce(context.Background())
		return e.analysis(t, org, down).Status != analysisstore.StatusPending
	}, "the analysis of a model always down still pending")
	for range analysis.MaxAttempts {
		s.RunOnce(context.Background())
	}
	a = e.analysis(t, org, down)
	json.Unmarshal(a.Result, &res)
	if a.Status != analysisstore.StatusFailed || !strings.Contains(res.Error, fmt.Sprintf("gave up after %d attempts", analysis.MaxAttempts)) ||
		!strings.Contains(res.Error, "503") {
		t.Fatalf("a model always down: %s %q, %d attempts", a.Status, res.Error, a.Attempts)
	}
	if got := e.model.Requests.Load() - 1; got != analysis.MaxAttempts {
		t.Errorf("model asked %d times for %d attempts", got, analysis.MaxAttempts)
	}
}

// A row claimed again and again (its process killed while it ran) fails
// after MaxAttempts claims instead of being claimed forever.
func TestAbandonedClaimsAreBounded(t *testing.T) {
	e := newEnv(t)
	org, agent := e.org(t, "acme", summaryPlan)
	id := e.ended(t, org, agent, "hello")
	ctx := context.Background()
	for range analysis.MaxAttempts {
		if jobs, err := e.db.Analyses.Claim(ctx, "dead-process", -time.Second, 1); err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v %v", jobs, err)
		}
	}
	s := e.service(t, analysis.Config{})
	if n, err := s.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("run: %d %v", n, err)
	}
	a := e.analysis(t, org, id)
	if a.Status != analysisstore.StatusFailed || !strings.Contains(string(a.Result), "never finished") || e.model.Requests.Load() != 0 {
		t.Fatalf("after %d abandoned claims: %s %s, %d model requests", analysis.MaxAttempts, a.Status, a.Result, e.model.Requests.Load())
	}
}

// A transcript far beyond the model's context is trimmed to it (the newest
// messages, a note saying so), not sent whole.
func TestTranscriptTrimmedToContext(t *testing.T) {
	e := newEnv(t)
	org, agent := e.org(t, "acme", summaryPlan)
	e.model.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: `{"summary":"long"}`} })
	texts := make([]string, 1400)
	total := 0
	for i := range texts {
		texts[i] = fmt.Sprintf("message %d: ", i) + strings.Repeat("lorem ipsum dolor sit amet ", 60)
		total += len(texts[i])
	}
	id := e.ended(t, org, agent, texts...)
	s := e.service(t, analysis.Config{ContextTokens: 8192})
	if _, err := s.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a := e.analysis(t, org, id); a.Status != analysisstore.StatusCompleted {
		t.Fatalf("analysis %s %s", a.Status, a.Result)
	}
	req := e.model.Last()
	body := req.All()
	if len(req.Body) > 8192*6 || !strings.Contains(body, "trimmed to fit the model's context") || !strings.Contains(body, "message 1399:") ||
		strings.Contains(body, "message 0:") {
		t.Fatalf("sent %d bytes of a %d-byte transcript; note %v", len(req.Body), total, strings.Contains(body, "trimmed"))
	}
	t.Logf("a %d-byte transcript sent as %d bytes", total, len(req.Body))
}

// A plan whose schema is too costly is refused when it is set, naming the
// field and the bound, and nothing is stored.
func TestSetPlanRefusesCostlySchema(t *testing.T) {
	e := newEnv(t)
	org, agent := e.org(t, "acme", summaryPlan)
	s := e.service(t, analysis.Config{})
	body := []byte(`{"structuredData":{"schema":` + schemaBomb(30) + `}}`)
	began := time.Now()
	_, err := s.SetPlan(context.Background(), org, agent, body)
	if err == nil || !strings.Contains(err.Error(), "analysisPlan.structuredData.schema") || !strings.Contains(err.Error(), fmt.Sprint(analysis.MaxSchemaExpanded)) {
		t.Fatalf("schema bomb: %v", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("refusing the bomb took %s", d)
	}
	if p, err := e.db.Analyses.Plan(context.Background(), org, agent); err != nil || string(p) != summaryPlan {
		t.Fatalf("plan after a refused one: %s %v", p, err)
	}
}

// A bomb already stored (saved before the bound existed) ends as failed,
// quickly, and holds back nothing.
func TestStoredSchemaBombFails(t *testing.T) {
	e := newEnv(t)
	org, agent := e.org(t, "acme", `{"structuredData":{"schema":`+schemaBomb(30)+`}}`)
	e.model.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: `{"structuredData":"x"}`} })
	id := e.ended(t, org, agent, "hello")
	s := e.service(t, analysis.Config{})
	began := time.Now()
	if _, err := s.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := e.analysis(t, org, id)
	if a.Status != analysisstore.StatusFailed || !strings.Contains(string(a.Result), "plan is invalid") || time.Since(began) > 5*time.Second {
		t.Fatalf("stored bomb: %s %s after %s", a.Status, a.Result, time.Since(began))
	}
}

// schemaBomb is levels of allOf, each naming the next level twice: 2^levels
// evaluations for the library, in about 65 bytes a level.
func schemaBomb(levels int) string {
	var b strings.Builder
	b.WriteString(`{"$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}},"$ref":"#/$defs/d0"}`, levels)
	return b.String()
}
