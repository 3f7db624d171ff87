package mcp_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	agentdmcp "github.com/agentd/agentd/app/mcp"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// agentd mcp's server over stdio, with the SDK's client on the other end
// of the pipes: the key's organization and role decide.
func TestStdio(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := storetest.Fresh(t)
	f, err := features.Open(ctx, features.Config{DBPath: db.Path(), KB: kb.Config{EmbedDims: 64}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	org, ownerKey, _, err := f.Access.CreateOrg(ctx, "acme", "owner@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := f.Stores.Orgs.FirstOwner(ctx, org.ID)
	viewer, err := f.Access.AddMember(ctx, access.Actor{UserID: owner.ID, Role: "owner"}, org.ID, "v@acme.test", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	viewerKey, _, err := f.Access.CreateKey(ctx, org.ID, viewer.ID, access.KeyOptions{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "nope", "agd_" + strings.Repeat("x", 40)} {
		if _, err := agentdmcp.KeyPrincipal(ctx, f.Stores.Orgs, bad, time.Now()); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	if _, err := agentdmcp.KeyPrincipal(ctx, f.Stores.Orgs, ownerKey, time.Now().Add(365*24*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired key: %v", err)
	}
	deps := agentdmcp.Deps{Agents: f.Agents, Calls: f.Calls, KB: f.KB, Conversations: f.Conversations, Analysis: f.Analysis}
	session := func(key string) *sdk.ClientSession {
		p, err := agentdmcp.KeyPrincipal(ctx, f.Stores.Orgs, key, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		cr, sw := io.Pipe() // server -> client
		sr, cw := io.Pipe() // client -> server
		go agentdmcp.Stdio(ctx, deps, p, sr, sw)
		c := sdk.NewClient(&sdk.Implementation{Name: "assistant", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	text := func(cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	o := session(ownerKey)
	if out, isErr := text(o, "create_agent", map[string]any{"name": "Stdio desk", "type": "chat"}); isErr || !strings.Contains(out, "Stdio desk") {
		t.Fatalf("create_agent: %v %s", isErr, out)
	}
	v := session(viewerKey)
	if out, isErr := text(v, "list_agents", nil); isErr || !strings.Contains(out, "Stdio desk") {
		t.Errorf("viewer read: %v %s", isErr, out)
	}
	if out, isErr := text(v, "create_agent", map[string]any{"name": "x", "type": "chat"}); !isErr || !strings.Contains(out, "forbidden") {
		t.Errorf("viewer write: %v %s", isErr, out)
	}
}
