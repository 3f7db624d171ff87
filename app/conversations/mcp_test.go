package conversations_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// ordersServer is an MCP server made with the SDK whose lookup_order tool
// answers an order's status, for the bearer token "s3cret" only.
func ordersServer(t *testing.T) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "lookup_order", Description: "Look up an order"},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			ID string `json:"id"`
		}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "order " + in.ID + " shipped"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// setWithModel is the features over a fresh database and the scripted
// model, url and mcp tools allowed on loopback.
func setWithModel(t *testing.T, model *llmtest.Server) (*features.Set, string) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	f, err := features.Open(ctx, features.Config{DBPath: db.Path(), KB: kb.Config{EmbedDims: 64}, Webhooks: events.Config{AllowPrivate: true},
		LLM: llm.Config{Kind: "openai", URL: model.URL, Model: "scripted", Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, org
}

func chatAgent(t *testing.T, f *features.Set, org, tools string) string {
	name, typ := "Orders", "chat"
	a, err := f.Agents.Create(context.Background(), org, agents.Input{Name: &name, Type: &typ, Tools: json.RawMessage(tools)})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// An agent calls an MCP server's tool in a conversation: offered under its
// namespaced name, called with the entry's (decrypted) header, its result
// fed back to the model.
func TestAgentCallsMCPTool(t *testing.T) {
	ctx := context.Background()
	url := ordersServer(t) // closed after the features' MCP sessions (cleanups run last first)
	model := llmtest.New(t)
	f, org := setWithModel(t, model)
	agentID := chatAgent(t, f, org, `[{"type":"mcp","name":"orders","url":"`+url+`","headers":{"Authorization":"Bearer s3cret"}}]`)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.All(), "order A17 shipped") {
			return llmtest.Reply{Content: "Your order A17 has shipped."}
		}
		if slices.Contains(r.ToolNames(), "mcp_orders_lookup_order") {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "mcp_orders_lookup_order", Arguments: `{"id":"A17"}`}}}
		}
		return llmtest.Reply{Content: "no tool offered"}
	})
	conv, err := f.Conversations.Start(ctx, org, "api", conversations.StartInput{AgentID: agentID})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := f.Conversations.Send(ctx, org, conv.ID, "Where is my order A17?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content != "Your order A17 has shipped." || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Result != "order A17 shipped" {
		t.Fatalf("answer %q, tool calls %+v", msg.Content, msg.ToolCalls)
	}
}

// An unreachable MCP server is a note in the transcript, not a failed
// turn: the model answers without its tools.
func TestUnreachableMCPServerIsANote(t *testing.T) {
	ctx := context.Background()
	model := llmtest.New(t)
	f, org := setWithModel(t, model)
	agentID := chatAgent(t, f, org, `[{"type":"mcp","name":"gone","url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer hidden-token"}}]`)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "I cannot look that up right now."}
	})
	conv, err := f.Conversations.Start(ctx, org, "api", conversations.StartInput{AgentID: agentID})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := f.Conversations.Send(ctx, org, conv.ID, "Where is my order?", nil)
	if err != nil {
		t.Fatalf("the turn failed: %v", err)
	}
	if len(model.Last().ToolNames()) != 0 {
		t.Errorf("tools offered: %v", model.Last().ToolNames())
	}
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Name != "mcp:gone" || !strings.Contains(msg.ToolCalls[0].Result, "MCP server gone is unavailable") ||
		strings.Contains(msg.ToolCalls[0].Result, "hidden-token") {
		t.Fatalf("note %+v", msg.ToolCalls)
	}
	got, err := f.Conversations.Get(ctx, org, conv.ID)
	if err != nil || !strings.Contains(mustJSON(got), "MCP server gone is unavailable") {
		t.Errorf("transcript lacks the note: %v %s", err, mustJSON(got))
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
