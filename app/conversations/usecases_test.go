package conversations_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/safehttp"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// The engine's use cases on the stores of either engine (SQLite, or
// PostgreSQL with AGENTD_TEST_POSTGRES), with the scripted model and a real
// tool server: no HTTP of ours.

type engine struct {
	*conversations.Service
	db    *storage.Stores
	org   string
	model *llmtest.Server
}

func newEngine(t *testing.T, cfg conversations.Config) *engine {
	t.Helper()
	db, org := storetest.WithOrg(t)
	m := llmtest.New(t)
	model, err := llm.NewOpenAI(llm.OpenAIConfig{URL: m.URL, Model: "scripted", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = model
	svc, err := conversations.New(conversations.Deps{Agents: db.Agents, Store: db.Conversations,
		Tools: safehttp.New(safehttp.Options{AllowPrivate: true, MaxBody: conversations.MaxToolAnswer + 1})}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &engine{Service: svc, db: db, org: org, model: m}
}

// agent creates an active agent of the type, with a url tool at url ("":
// none).
func (e *engine) agent(t *testing.T, typ, url string) string {
	t.Helper()
	a := agentstore.Agent{OrgID: e.org, Name: "Shop", Type: typ, Status: "active", Instructions: "Be brief."}
	if typ == "voice" {
		a.PhoneNumbers = []string{"+14155550100"}
	}
	if url != "" {
		a.Tools, _ = json.Marshal([]map[string]any{{"id": "t1", "name": "lookup", "description": "Look up", "url": url,
			"parameters": map[string]any{"type": "object"}}})
	}
	created, err := e.db.Agents.CreateAgent(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return created.ID
}

func (e *engine) send(t *testing.T, agent, content string) (conversations.Message, string, error) {
	t.Helper()
	v, err := e.Start(context.Background(), e.org, conversations.ChannelAPI, conversations.StartInput{AgentID: agent})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Send(context.Background(), e.org, v.ID, content, nil)
	return m, v.ID, err
}

// counter is a url tool that counts its calls and the most at once.
type counter struct {
	url              string
	posts, now, most atomic.Int64
	sig              atomic.Value // the last webhook-signature
}

func newCounter(t *testing.T, hold time.Duration) *counter {
	c := &counter{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.posts.Add(1)
		n := c.now.Add(1)
		defer c.now.Add(-1)
		for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
		}
		c.sig.Store(r.Header.Get("webhook-signature"))
		io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func manyCalls(r llmtest.Request) llmtest.Reply {
	if len(r.Tools) == 0 {
		return llmtest.Reply{Content: "Done."}
	}
	calls := make([]llmtest.ToolCall, 64)
	for i := range calls {
		calls[i] = llmtest.ToolCall{ID: fmt.Sprintf("c%d_%d", len(r.Messages), i), Name: "lookup", Arguments: `{}`}
	}
	return llmtest.Reply{ToolCalls: calls}
}

// A model asking 64 calls an answer, round after round, gets at most
// MaxToolCallsPerTurn run, MaxParallelTools at once; the stored answer
// records the calls refused with "tool call limit reached".
func TestToolCallsBounded(t *testing.T) {
	e := newEngine(t, conversations.Config{})
	tool := newCounter(t, 50*time.Millisecond)
	agent := e.agent(t, "chat", tool.url)
	if _, err := e.RotateToolsSecret(context.Background(), e.org); err != nil {
		t.Fatal(err)
	}
	e.model.Answer(manyCalls)
	m, _, err := e.send(t, agent, "look everything up")
	if err != nil || m.Content != "Done." {
		t.Fatalf("%+v %v", m, err)
	}
	if n := tool.posts.Load(); n != conversations.MaxToolCallsPerTurn {
		t.Fatalf("%d tool POSTs, want %d", n, conversations.MaxToolCallsPerTurn)
	}
	if n := tool.most.Load(); n > conversations.MaxParallelTools {
		t.Fatalf("%d calls at once", n)
	}
	limited := 0
	for _, c := range m.ToolCalls {
		if strings.Contains(c.Result, "tool call limit reached") {
			limited++
		}
	}
	if limited == 0 || len(m.ToolCalls)-limited != conversations.MaxToolCallsPerTurn {
		t.Fatalf("%d calls recorded, %d limited", len(m.ToolCalls), limited)
	}
}

// The turn deadline ends a turn of slow tools with a gateway timeout;
// nothing is stored.
func TestTurnDeadlineUseCase(t *testing.T) {
	e := newEngine(t, conversations.Config{TurnTimeout: 700 * time.Millisecond, ToolTimeout: 5 * time.Second})
	tool := newCounter(t, 3*time.Second)
	agent := e.agent(t, "chat", tool.url)
	e.RotateToolsSecret(context.Background(), e.org)
	e.model.Answer(manyCalls)
	t0 := time.Now()
	_, conv, err := e.send(t, agent, "look it up")
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("the turn took %s", d)
	}
	var ee *errs.Error
	if !errors.As(err, &ee) || ee.Kind != errs.GatewayTimeout || !strings.Contains(ee.Message, "turn deadline") {
		t.Fatalf("err %v", err)
	}
	if v, _ := e.Get(context.Background(), e.org, conv); v.MessageCount != 0 {
		t.Fatalf("a timed-out turn stored %d messages", v.MessageCount)
	}
}

// A hostile model's endless stream fails the turn as a bad gateway naming
// the bound; nothing is stored.
func TestAnswerTooLargeUseCase(t *testing.T) {
	e := newEngine(t, conversations.Config{})
	agent := e.agent(t, "chat", "")
	e.model.Push(llmtest.Reply{Content: "Hi ", Flood: 60 << 10})
	_, conv, err := e.send(t, agent, "hello")
	var ee *errs.Error
	if !errors.As(err, &ee) || ee.Kind != errs.BadGateway || !strings.Contains(ee.Message, "answer too large") {
		t.Fatalf("err %v", err)
	}
	if v, _ := e.Get(context.Background(), e.org, conv); v.MessageCount != 0 {
		t.Fatalf("stored %d messages", v.MessageCount)
	}
}

// url tools are not called before the organization has a tools secret;
// after a rotation they carry two signatures (new and previous).
func TestToolsSecretUseCase(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, conversations.Config{})
	tool := newCounter(t, 0)
	agent := e.agent(t, "chat", tool.url)
	one := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{}`}}}
	e.model.Push(one, llmtest.Reply{Content: "No."})
	m, _, err := e.send(t, agent, "look")
	if err != nil || tool.posts.Load() != 0 || len(m.ToolCalls) != 1 || !strings.Contains(m.ToolCalls[0].Result, "no tools secret") {
		t.Fatalf("without a secret: %d posts, %+v %v", tool.posts.Load(), m.ToolCalls, err)
	}
	first, err := e.RotateToolsSecret(ctx, e.org)
	if err != nil || !strings.HasPrefix(first.Secret, "whsec_") || first.PreviousSecretExpiresAt != nil {
		t.Fatalf("%+v %v", first, err)
	}
	second, err := e.RotateToolsSecret(ctx, e.org)
	if err != nil || second.PreviousSecretExpiresAt == nil {
		t.Fatalf("%+v %v", second, err)
	}
	e.model.Push(one, llmtest.Reply{Content: "Yes."})
	if _, _, err := e.send(t, agent, "look"); err != nil || tool.posts.Load() != 1 {
		t.Fatalf("%d posts, %v", tool.posts.Load(), err)
	}
	sigs := strings.Fields(tool.sig.Load().(string))
	if len(sigs) != 2 {
		t.Fatalf("signatures %q", sigs)
	}
}

// x-agentd-call-id turns: a live call of the same agent only, messages at
// most MaxCompletionMessage, each turn appended as lines.
func TestCompleteOnCalls(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, conversations.Config{})
	voice, other := e.agent(t, "voice", ""), e.agent(t, "chat", "")
	calls, err := e.db.Calls.CreateCalls(ctx, []callstore.Call{
		{OrgID: e.org, AgentID: voice, PhoneNumber: "+14155550123", DueAt: time.Now()},
		{OrgID: e.org, AgentID: voice, PhoneNumber: "+14155550124", DueAt: time.Now(), Status: callstore.CallCompleted},
	})
	if err != nil {
		t.Fatal(err)
	}
	live, ended := calls[0].ID, calls[1].ID
	msg := func(s string) []llm.Message { return []llm.Message{{Role: "user", Content: s}} }
	for i := range 3 {
		if _, err := e.Complete(ctx, e.org, e.db.Calls, conversations.CompleteInput{AgentID: voice, CallID: live,
			Messages: msg(fmt.Sprint("question ", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := e.db.Calls.Transcript(ctx, live)
	if err != nil || len(lines) != 6 || lines[4].Text != "question 2" || lines[5].Role != "agent" {
		t.Fatalf("%+v %v", lines, err)
	}
	for _, c := range []struct {
		name  string
		in    conversations.CompleteInput
		kind  errs.Kind
		field string
	}{
		{"another agent", conversations.CompleteInput{AgentID: other, CallID: live, Messages: msg("hi")}, errs.NotFound, ""},
		{"unknown call", conversations.CompleteInput{AgentID: voice, CallID: "nope", Messages: msg("hi")}, errs.NotFound, ""},
		{"ended call", conversations.CompleteInput{AgentID: voice, CallID: ended, Messages: msg("hi")}, errs.Conflict, ""},
		{"huge message", conversations.CompleteInput{AgentID: voice, CallID: live,
			Messages: msg(strings.Repeat("x", conversations.MaxCompletionMessage+1))}, errs.Invalid, "messages.0.content"},
	} {
		_, err := e.Complete(ctx, e.org, e.db.Calls, c.in, nil)
		var ee *errs.Error
		if !errors.As(err, &ee) || ee.Kind != c.kind || ee.Field != c.field {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if lines, _ := e.db.Calls.Transcript(ctx, live); len(lines) != 6 {
		t.Fatalf("refused turns wrote %d lines", len(lines)-6)
	}
}
