package test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// bearerTransport sends the key as Authorization: Bearer.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession is the SDK's client on agentd's /mcp with key.
func mcpSession(t *testing.T, s *server, key string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: s.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{key}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpCall(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// viewerKey adds a viewer to the organization and returns their key.
func (s *server) viewerKey(org string) string {
	s.t.Helper()
	s.cli("user", "add", "viewer@"+org+".test", "--role", "viewer", "--org", org)
	var k struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(s.cli("--json", "key", "create", "--org", org, "--user", "viewer@"+org+".test")), &k); err != nil {
		s.t.Fatal(err)
	}
	return k.Key
}

// TestMCPServer: the SDK's client lists and calls agentd's tools over /mcp
// of the real server; a viewer reads and is refused writes; another
// organization's agent and call are not found; a key in x-api-key works as
// well as Bearer; no key is 401.
func TestMCPServer(t *testing.T) {
	s := start(t, t.TempDir())
	key := s.newOrg("mcpa")
	viewer := s.viewerKey("mcpa")
	keyB := s.newOrg("mcpb")
	owner := mcpSession(t, s, key)
	var names []string
	for tool, err := range owner.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"list_agents", "create_agent", "update_agent", "search_knowledge", "upsert_source",
		"schedule_call", "outbound_call", "get_call", "list_conversations", "pause_batch", "resume_batch", "cancel_batch"} {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %s in %v", want, names)
		}
	}
	out, isErr := mcpCall(t, owner, "create_agent", map[string]any{"name": "Line", "type": "voice", "phoneNumbers": []string{"+14155550100"}})
	if isErr {
		t.Fatalf("create_agent: %s", out)
	}
	var agent struct{ ID string }
	json.Unmarshal([]byte(out), &agent)
	// The same validation as POST /api/v1/agents, as a tool error.
	httpErr := s.must("POST", "/api/v1/agents", key, map[string]any{"name": "x", "type": "robot"})
	out, isErr = mcpCall(t, owner, "create_agent", map[string]any{"name": "x", "type": "robot"})
	var httpBody struct{ Error struct{ Message string } }
	json.Unmarshal(httpErr.body, &httpBody)
	if !isErr || httpErr.status != 400 || httpBody.Error.Message != out {
		t.Errorf("bad type: tool %v %q, HTTP %d %s", isErr, out, httpErr.status, trunc(httpErr.body))
	}
	out, isErr = mcpCall(t, owner, "schedule_call", map[string]any{"agentId": agent.ID, "contactPhone": "+14155550199",
		"scheduledAt": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)})
	if isErr {
		t.Fatalf("schedule_call: %s", out)
	}
	var call struct{ Call struct{ ID string } }
	json.Unmarshal([]byte(out), &call)
	if out, isErr = mcpCall(t, owner, "get_call", map[string]any{"id": call.Call.ID}); isErr || !strings.Contains(out, "+14155550199") {
		t.Errorf("get_call: %v %s", isErr, out)
	}

	v := mcpSession(t, s, viewer)
	if out, isErr := mcpCall(t, v, "get_agent", map[string]any{"id": agent.ID}); isErr || !strings.Contains(out, "Line") {
		t.Errorf("viewer read: %v %s", isErr, out)
	}
	for _, w := range []struct {
		tool string
		args map[string]any
	}{{"create_agent", map[string]any{"name": "v", "type": "chat"}}, {"update_agent", map[string]any{"id": agent.ID, "name": "v"}},
		{"schedule_call", map[string]any{"agentId": agent.ID, "contactPhone": "+14155550198"}}} {
		if out, isErr := mcpCall(t, v, w.tool, w.args); !isErr || !strings.Contains(out, "forbidden") {
			t.Errorf("viewer %s: %v %s", w.tool, isErr, out)
		}
	}

	// Tenant isolation: B's key finds nothing of A's, changes nothing.
	before := snapshot(t, s.db)
	b := mcpSession(t, s, keyB)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"get_agent", map[string]any{"id": agent.ID}}, {"update_agent", map[string]any{"id": agent.ID, "name": "stolen"}},
		{"get_call", map[string]any{"id": call.Call.ID}}, {"schedule_call", map[string]any{"agentId": agent.ID, "contactPhone": "+14155550197"}}} {
		if out, isErr := mcpCall(t, b, c.tool, c.args); !isErr || !strings.Contains(out, "not found") {
			t.Errorf("org B %s: %v %s", c.tool, isErr, out)
		}
	}
	if out, _ := mcpCall(t, b, "list_agents", nil); strings.Contains(out, agent.ID) {
		t.Errorf("org B lists A's agent: %s", out)
	}
	if _, err := b.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "agentd://calls/" + call.Call.ID}); err == nil {
		t.Error("org B reads A's call resource")
	}
	if after := snapshot(t, s.db); after != before {
		t.Errorf("org B changed A's data")
	}

	// The key in x-api-key, and no key.
	init := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		header, value string
		want          int
	}{{"x-api-key", key, 200}, {"", "", 401}} {
		req, _ := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if c.header != "" {
			req.Header.Set(c.header, c.value)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != c.want {
			t.Errorf("%q: %d, want %d", c.header, r.StatusCode, c.want)
		}
	}
	if strings.Contains(s.Logs.String(), key[8:]) {
		t.Error("a key is in the log")
	}
}

// TestMCPStdio: agentd mcp over stdio, the SDK's client on its pipes.
func TestMCPStdio(t *testing.T) {
	s := start(t, t.TempDir())
	key := s.newOrg("stdio")
	cmd := exec.Command(agentdBin, "--db", s.db, "mcp")
	cmd.Env = append(os.Environ(), "AGENTD_API_KEY="+key)
	c := sdk.NewClient(&sdk.Implementation{Name: "assistant", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if out, isErr := mcpCall(t, cs, "create_agent", map[string]any{"name": "From stdio", "type": "chat"}); isErr {
		t.Fatalf("create_agent: %s", out)
	}
	if r := s.must("GET", "/api/v1/agents", key, nil); !strings.Contains(string(r.body), "From stdio") {
		t.Errorf("the agent made over stdio is not served: %s", trunc(r.body))
	}
}

// The official TypeScript SDK (test/mcp-node, npm ci there): as a client of
// /mcp (list, a read, a write, a viewer refused a write), and as an MCP
// server whose tool an agent calls in a conversation (scripted model).
func TestMCPNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: CI installs it (.ci/run)")
	}
	dir, _ := filepath.Abs("mcp-node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("test/mcp-node/node_modules is missing: run npm ci there (.ci/run does)")
	}
	// The TypeScript MCP server, first: it prints its port.
	srv := exec.Command(node, "server.mjs")
	srv.Dir = dir
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var port struct{ Port int }
	if err != nil || json.Unmarshal([]byte(line), &port) != nil || port.Port == 0 {
		t.Fatalf("node server: %q %v", line, err)
	}

	model := llmtest.New(t)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		switch {
		case strings.Contains(r.All(), "order B52 shipped on Tuesday"):
			return llmtest.Reply{Content: "Order B52 shipped on Tuesday."}
		case slices.Contains(r.ToolNames(), "mcp_orders_lookup_order"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "mcp_orders_lookup_order", Arguments: `{"id":"B52"}`}}}
		}
		return llmtest.Reply{Content: "no tool"}
	})
	s := start(t, t.TempDir(), "--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted", "--webhook-allow-private")
	key := s.newOrg("node")
	viewer := s.viewerKey("node")
	agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Orders", "type": "chat", "instructions": "Help.",
		"tools": []any{map[string]any{"type": "mcp", "name": "orders", "url": "http://127.0.0.1:" + strconv.Itoa(port.Port) + "/mcp",
			"headers": map[string]string{"Authorization": "Bearer node-token"}}}}))
	if r := s.must("GET", "/api/v1/agents/"+agent, key, nil); strings.Contains(string(r.body), "node-token") {
		t.Errorf("a read shows the header: %s", trunc(r.body))
	}
	conv := dataID(t, s.must("POST", "/api/v1/conversations", key, map[string]any{"agentId": agent}))
	r := s.must("POST", "/api/v1/conversations/"+conv+"/messages", key, map[string]any{"content": "Where is order B52?"})
	if r.status != 200 || !strings.Contains(string(r.body), "Order B52 shipped on Tuesday.") || !strings.Contains(string(r.body), "mcp_orders_lookup_order") {
		t.Errorf("conversation: %d %s", r.status, trunc(r.body))
	}
	if strings.Contains(s.Logs.String(), "node-token") {
		t.Error("the MCP header is in the log")
	}

	cl := exec.Command(node, "client.mjs")
	cl.Dir = dir
	cl.Env = append(os.Environ(), "AGENTD_MCP_URL="+s.URL+"/mcp", "AGENTD_KEY="+key, "AGENTD_VIEWER_KEY="+viewer)
	out, err := cl.CombinedOutput()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var got struct {
		Tools                                 []string
		Create, List, ViewerWrite, ViewerRead struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !slices.Contains(got.Tools, "create_agent") || got.Create.IsError || got.List.IsError || !strings.Contains(got.List.Text, "Node desk") ||
		!got.ViewerWrite.IsError || !strings.Contains(got.ViewerWrite.Text, "forbidden") || got.ViewerRead.IsError {
		t.Errorf("node client: %s", out)
	}
}
