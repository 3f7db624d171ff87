package llm_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

func newClient(t *testing.T, url string, timeout time.Duration) *llm.OpenAI {
	t.Helper()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{URL: url, Model: "scripted", APIKey: "sk-test", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A streamed answer arrives in deltas that add up to the content; streamed
// tool-call arguments are joined; usage and the key reach the service.
func TestOpenAIStream(t *testing.T) {
	s := llmtest.New(t)
	s.Push(llmtest.Reply{Content: "one two three", PromptTokens: 9, CompletionTokens: 3},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "a", Arguments: `{"q":"long enough to be cut in pieces"}`}, {ID: "c2", Name: "b", Arguments: `{}`}}})
	c := newClient(t, s.URL, 5*time.Second)
	var deltas []string
	r, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}, func(d string) { deltas = append(deltas, d) })
	if err != nil || r.Content != "one two three" || len(deltas) != 3 || r.Usage.TotalTokens != 12 || r.FinishReason != "stop" {
		t.Fatalf("%+v %v %q", r, err, deltas)
	}
	if got := s.Last(); got.Header.Get("Authorization") != "Bearer sk-test" || got.Model != "scripted" || !got.Stream {
		t.Fatalf("request %+v", got)
	}
	r, err = c.Chat(context.Background(), llm.Request{Model: "other", Messages: []llm.Message{{Role: "user", Content: "hi"}},
		Tools: []llm.Tool{{Name: "a"}, {Name: "b"}}}, nil)
	if err != nil || len(r.ToolCalls) != 2 || r.ToolCalls[0].Arguments != `{"q":"long enough to be cut in pieces"}` || r.ToolCalls[1].Name != "b" || r.FinishReason != "tool_calls" {
		t.Fatalf("%+v %v", r, err)
	}
	if s.Last().Model != "other" {
		t.Fatalf("the agent's model did not override the default")
	}
}

// Failures are classified: 5xx and a dropped stream unavailable (502),
// the timeout 504, the caller's end canceled (and the request upstream
// ends with it), a refused connection unavailable.
func TestOpenAIFailures(t *testing.T) {
	s := llmtest.New(t)
	c := newClient(t, s.URL, 300*time.Millisecond)
	req := llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}
	for _, tc := range []struct {
		reply llmtest.Reply
		kind  errs.Kind
	}{
		{llmtest.Reply{Status: 500}, errs.BadGateway},
		{llmtest.Reply{Status: 429}, errs.BadGateway},
		{llmtest.Reply{Content: "a b c d", DropAfter: 2}, errs.BadGateway},
		{llmtest.Reply{Content: "late", Delay: 2 * time.Second}, errs.GatewayTimeout},
	} {
		s.Push(tc.reply)
		_, err := c.Chat(context.Background(), req, nil)
		if errs.KindOf(err) != tc.kind || !strings.Contains(err.Error(), "model service openai at 127.0.0.1") {
			t.Errorf("%+v: %v (%v)", tc.reply, err, errs.KindOf(err))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.Push(llmtest.Reply{Content: "late", Delay: 5 * time.Second})
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := c.Chat(ctx, req, nil); errs.KindOf(err) != errs.Canceled {
		t.Fatalf("caller gone: %v", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	down := newClient(t, "http://"+addr+"/v1", time.Second)
	if _, err := down.Chat(context.Background(), req, nil); errs.KindOf(err) != errs.BadGateway {
		t.Fatalf("refused: %v", err)
	}
}

func TestNewConfig(t *testing.T) {
	for _, c := range []struct {
		cfg llm.Config
		ok  bool
	}{
		{llm.Config{}, true},
		{llm.Config{Kind: "builtin"}, true},
		{llm.Config{Kind: "openai", URL: "http://x/v1", Model: "m"}, true},
		{llm.Config{Kind: "openai", Model: "m"}, false},
		{llm.Config{Kind: "openai", URL: "ftp://x", Model: "m"}, false},
		{llm.Config{Kind: "openai", URL: "http://x/v1"}, false},
		{llm.Config{Kind: "gpt"}, false},
		{llm.Config{ContextTokens: 100}, false},
	} {
		m, err := llm.New(c.cfg)
		if (err == nil) != c.ok {
			t.Errorf("%+v: %v", c.cfg, err)
		}
		if err != nil && m != nil {
			t.Errorf("%+v: a model with an error", c.cfg)
		}
	}
}

// --llm-url is the same service with or without the trailing /v1 (the
// convention of every upstream flag, internal/baseurl).
func TestOpenAIBaseURLForms(t *testing.T) {
	s := llmtest.New(t)
	root := strings.TrimSuffix(s.URL, "/v1")
	for _, u := range []string{s.URL, s.URL + "/", root, root + "/"} {
		s.Push(llmtest.Reply{Content: "ok"})
		r, err := newClient(t, u, 5*time.Second).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}, nil)
		if err != nil || r.Content != "ok" {
			t.Fatalf("--llm-url %s: %+v %v", u, r, err)
		}
	}
	if _, err := llm.NewOpenAI(llm.OpenAIConfig{URL: "127.0.0.1:11434"}); err == nil {
		t.Fatal("a URL without a scheme was accepted")
	}
}
