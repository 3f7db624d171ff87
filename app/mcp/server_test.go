package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	agentdmcp "github.com/agentd/agentd/app/mcp"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// serve is the MCP server over a fresh database with two organizations,
// behind a stand-in for the API's authentication: the bearer token names
// the principal ("org:role").
func serve(t *testing.T) (url string, orgs [2]string, f *features.Set) {
	t.Helper()
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	other, err := db.Orgs.CreateOrg(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	f, err = features.Open(ctx, features.Config{DBPath: db.Path(), KB: kb.Config{EmbedDims: 64}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	srv := agentdmcp.New(agentdmcp.Deps{Agents: f.Agents, Calls: f.Calls, KB: f.KB, Conversations: f.Conversations, Analysis: f.Analysis}, agentdmcp.Options{})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		org, role, ok := strings.Cut(token, ":")
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return agentdmcp.TokenInfo(agentdmcp.Principal{KeyID: token, OrgID: org, Role: role}), nil
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h))
	t.Cleanup(ts.Close)
	return ts.URL, [2]string{org, other.ID}, f
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, url, token string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestToolsOverHTTP(t *testing.T) {
	url, orgs, _ := serve(t)
	owner := connect(t, url, orgs[0]+":owner")
	ctx := context.Background()
	var names []string
	for tool, err := range owner.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"list_agents", "get_agent", "create_agent", "update_agent", "search_knowledge", "upsert_source",
		"schedule_call", "outbound_call", "get_call", "list_conversations", "pause_batch", "resume_batch", "cancel_batch"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("tool %s missing from %v", want, names)
		}
	}

	// A write, then a read of it.
	out, isErr := call(t, owner, "create_agent", map[string]any{"name": "Front desk", "type": "chat", "instructions": "Be brief."})
	if isErr {
		t.Fatalf("create_agent: %s", out)
	}
	var a struct{ ID, Name string }
	json.Unmarshal([]byte(out), &a)
	if out, isErr = call(t, owner, "get_agent", map[string]any{"id": a.ID}); isErr || !strings.Contains(out, "Front desk") {
		t.Fatalf("get_agent: %v %s", isErr, out)
	}
	if out, isErr = call(t, owner, "update_agent", map[string]any{"id": a.ID, "name": "Desk"}); isErr || !strings.Contains(out, `"Desk"`) {
		t.Fatalf("update_agent: %v %s", isErr, out)
	}

	// Bad input: the HTTP twin's message, as a tool error.
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"create_agent", map[string]any{"type": "chat"}, "name"},
		{"create_agent", map[string]any{"name": "x", "type": "robot"}, "type"},
		{"list_agents", map[string]any{"limit": 0}, "limit: must be an integer from 1 to 100"},
		{"get_agent", map[string]any{}, "id: required"},
		{"list_conversations", map[string]any{"status": "open"}, "status: must be active or ended"},
		{"schedule_call", map[string]any{"agentId": a.ID}, ""},
	} {
		out, isErr := call(t, owner, c.tool, c.args)
		if !isErr || !strings.Contains(out, c.want) {
			t.Errorf("%s %v: isError=%v %q, want an error with %q", c.tool, c.args, isErr, out, c.want)
		}
	}

	// A viewer reads, never writes.
	viewer := connect(t, url, orgs[0]+":viewer")
	if out, isErr := call(t, viewer, "list_agents", nil); isErr || !strings.Contains(out, a.ID) {
		t.Errorf("viewer list_agents: %v %s", isErr, out)
	}
	if out, isErr := call(t, viewer, "create_agent", map[string]any{"name": "x", "type": "chat"}); !isErr || !strings.Contains(out, "agent:write") {
		t.Errorf("viewer create_agent: %v %s", isErr, out)
	}

	// Another organization sees nothing of the first.
	other := connect(t, url, orgs[1]+":owner")
	if out, isErr := call(t, other, "get_agent", map[string]any{"id": a.ID}); !isErr || !strings.Contains(out, "not found") {
		t.Errorf("other org get_agent: %v %s", isErr, out)
	}
	if out, isErr := call(t, other, "update_agent", map[string]any{"id": a.ID, "name": "stolen"}); !isErr || !strings.Contains(out, "not found") {
		t.Errorf("other org update_agent: %v %s", isErr, out)
	}
	if out, _ := call(t, other, "list_agents", nil); strings.Contains(out, a.ID) {
		t.Errorf("other org lists the agent: %s", out)
	}
	if _, err := other.ReadResource(ctx, &sdk.ReadResourceParams{URI: "agentd://agents/" + a.ID}); err == nil {
		t.Error("other org reads the agent resource")
	}
	res, err := owner.ReadResource(ctx, &sdk.ReadResourceParams{URI: "agentd://agents/" + a.ID})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "Desk") {
		t.Errorf("agent resource: %v %+v", err, res)
	}
}
