package mcptools_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/conversations/mcptools"
	"github.com/agentd/agentd/internal/safehttp"
	"github.com/agentd/agentd/internal/testkit"
)

type orderArgs struct {
	ID string `json:"id" jsonschema:"the order number"`
}

// mcpServer is an MCP server made with the SDK: lookup_order answers the
// order's status, big answers 100 KB, slow never answers in time. It
// checks the Authorization header the agent's entry carries.
func mcpServer(t *testing.T, sse bool) (*sdk.Server, string) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "lookup_order", Description: "Look up an order"},
		func(_ context.Context, _ *sdk.CallToolRequest, in orderArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "order " + in.ID + " shipped"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "big"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 100<<10)}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "slow"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	if sse {
		h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func client(t *testing.T, o mcptools.Options) *mcptools.Client {
	if o.Guard == nil {
		o.Guard = safehttp.New(safehttp.Options{AllowPrivate: true})
	}
	c := mcptools.New(o)
	t.Cleanup(c.Close)
	return c
}

func names(ts []*sdk.Tool) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

func TestListAndCall(t *testing.T) {
	for _, sse := range []bool{false, true} {
		_, url := mcpServer(t, sse)
		c := client(t, mcptools.Options{Timeout: 2 * time.Second})
		s := mcptools.Server{Name: "orders", URL: url, Headers: map[string]string{"Authorization": "Bearer s3cret"}}
		ctx := context.Background()
		ts, err := c.Tools(ctx, s)
		if err != nil {
			t.Fatalf("sse=%v: %v", sse, err)
		}
		if got := names(ts); got != "big,lookup_order,slow" {
			t.Errorf("sse=%v: tools %s", sse, got)
		}
		res, err := c.Call(ctx, s, "lookup_order", map[string]any{"id": "A17"})
		if err != nil || res.IsError || res.Text != "order A17 shipped" {
			t.Errorf("sse=%v: call %+v %v", sse, res, err)
		}
		// Bad arguments are the tool's error, for the model to read.
		if res, err := c.Call(ctx, s, "lookup_order", map[string]any{"id": 5}); err != nil || !res.IsError {
			t.Errorf("sse=%v: bad arguments %+v %v", sse, res, err)
		}
		if _, err := c.Call(ctx, s, "big", nil); !errors.Is(err, mcptools.ErrTooLarge) {
			t.Errorf("sse=%v: big answer: %v", sse, err)
		}
	}
}

func TestAllowedToolsTimeoutAndRefusals(t *testing.T) {
	_, url := mcpServer(t, false)
	ctx := context.Background()
	c := client(t, mcptools.Options{Timeout: 300 * time.Millisecond})
	s := mcptools.Server{Name: "orders", URL: url, Headers: map[string]string{"Authorization": "Bearer s3cret"}, AllowedTools: []string{"lookup_order"}}
	ts, err := c.Tools(ctx, s)
	if err != nil || names(ts) != "lookup_order" {
		t.Fatalf("allowed tools: %s %v", names(ts), err)
	}
	start := time.Now()
	if _, err := c.Call(ctx, s, "slow", nil); !errors.Is(err, mcptools.ErrTimeout) || time.Since(start) > 5*time.Second {
		t.Errorf("slow: %v after %s", err, time.Since(start))
	}
	// A wrong token: unreachable, and the error holds neither URL nor token.
	bad := mcptools.Server{Name: "orders", URL: url, Headers: map[string]string{"Authorization": "Bearer wrong-token"}}
	_, err = c.Tools(ctx, bad)
	if !errors.Is(err, mcptools.ErrUnreachable) || strings.Contains(err.Error(), "wrong-token") || strings.Contains(err.Error(), url) {
		t.Errorf("wrong token: %v", err)
	}
	// The forgery guard: a loopback server is refused by default.
	guarded := client(t, mcptools.Options{Guard: safehttp.New(safehttp.Options{})})
	if _, err := guarded.Tools(ctx, s); !errors.Is(err, mcptools.ErrUnreachable) || !strings.Contains(err.Error(), "address not allowed") {
		t.Errorf("guard: %v", err)
	}
	// Nothing listens: unreachable, quickly.
	if _, err := c.Tools(ctx, mcptools.Server{Name: "gone", URL: "http://127.0.0.1:1/mcp"}); !errors.Is(err, mcptools.ErrUnreachable) {
		t.Errorf("nothing listening: %v", err)
	}
}

// The list is kept for the TTL, and refreshed at once when the server
// says it changed.
func TestListChanged(t *testing.T) {
	srv, url := mcpServer(t, false)
	ctx := context.Background()
	c := client(t, mcptools.Options{TTL: time.Hour})
	s := mcptools.Server{Name: "orders", URL: url, Headers: map[string]string{"Authorization": "Bearer s3cret"}}
	if _, err := c.Tools(ctx, s); err != nil {
		t.Fatal(err)
	}
	srv.AddTool(&sdk.Tool{Name: "refund", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	var listed string
	if !testkit.Within(5*time.Second, func() bool {
		ts, err := c.Tools(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		listed = names(ts)
		return strings.Contains(listed, "refund")
	}) {
		t.Fatalf("list not refreshed after the change: %s", listed)
	}
}

func TestFunction(t *testing.T) {
	if got := mcptools.Function("my crm", "find.contact", nil); got != "mcp_my_crm_find_contact" {
		t.Errorf("got %q", got)
	}
	taken := func(s string) bool { return s == "mcp_crm_find" }
	a, b := mcptools.Function("crm", "find", taken), mcptools.Function("crm", "find", nil)
	if a == b || len(a) > 64 || !strings.HasPrefix(a, "mcp_crm_find_") {
		t.Errorf("taken: %q %q", a, b)
	}
	long := mcptools.Function(strings.Repeat("s", 50), strings.Repeat("t", 50), nil)
	if len(long) > 64 || long == mcptools.Function(strings.Repeat("s", 50), strings.Repeat("t", 51), nil) {
		t.Errorf("long: %q", long)
	}
}
