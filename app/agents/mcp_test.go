package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/secretbox"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
)

// An mcp tools entry: validated like a url tool's URL; its header values
// sealed at rest, shown once, masked on reads, kept when sent back masked.
func TestMCPTools(t *testing.T) {
	ctx := context.Background()
	db, org := openDB(t)
	box, err := secretbox.New(secretbox.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	s := New(Deps{Agents: db.Agents, KB: db.KB, Secrets: box})
	tools := json.RawMessage(`[{"id":"t1","name":"lookup","url":"https://tools.example.com/x"},
		{"type":"mcp","name":"crm","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer tok-123"},"allowedTools":["find_contact"]}]`)
	a, err := s.Create(ctx, org, Input{Name: ptr("A"), Type: ptr("chat"), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(a.Tools), "Bearer tok-123") {
		t.Errorf("create does not show the header once: %s", a.Tools)
	}
	stored, _ := db.Agents.GetAgent(ctx, org, a.ID)
	if strings.Contains(string(stored.Tools), "tok-123") || !strings.Contains(string(stored.Tools), "sb1:") {
		t.Errorf("header not sealed at rest: %s", stored.Tools)
	}
	got, _ := s.Get(ctx, org, a.ID)
	if strings.Contains(string(got.Tools), "tok-123") || !strings.Contains(string(got.Tools), Masked) {
		t.Errorf("read not masked: %s", got.Tools)
	}
	list, _, _ := s.List(ctx, org, Query{})
	if strings.Contains(string(list[0].Tools), "tok-123") {
		t.Errorf("list not masked: %s", list[0].Tools)
	}
	// The dashboard and API send the masked value back: the stored one stays.
	if _, err := s.Update(ctx, org, a.ID, Input{Tools: got.Tools}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, org, a.ID, Input{Name: ptr("B")}); err != nil {
		t.Fatal(err)
	}
	stored, _ = db.Agents.GetAgent(ctx, org, a.ID)
	servers, bad := MCPServers(box, stored.Tools)
	if len(bad) != 0 || len(servers) != 1 || servers[0].Headers["Authorization"] != "Bearer tok-123" || servers[0].AllowedTools[0] != "find_contact" {
		t.Errorf("servers %+v bad %v", servers, bad)
	}

	for _, c := range []struct{ tools, field string }{
		{`[{"type":"mcp","name":"crm"}]`, "tools.0.url"},
		{`[{"type":"mcp","url":"https://x.example.com"}]`, "tools.0.name"},
		{`[{"type":"mcp","name":"has space","url":"https://x.example.com"}]`, "tools.0.name"},
		{`[{"type":"mcp","name":"crm","url":"ftp://x.example.com"}]`, "tools.0.url"},
		{`[{"type":"mcp","name":"crm","url":"https://u:p@x.example.com"}]`, "tools.0.url"},
		{`[{"type":"webhook","name":"crm","url":"https://x.example.com"}]`, "tools.0.type"},
		{`[{"type":"mcp","name":"crm","url":"https://x.example.com","headers":{"Host":"x"}}]`, "tools.0.headers.Host"},
		{`[{"type":"mcp","name":"crm","url":"https://x.example.com","headers":{"X":"a\nb"}}]`, "tools.0.headers.X"},
		{`[{"type":"mcp","name":"crm","url":"https://x.example.com","headers":{"X":1}}]`, "tools.0.headers"},
		{`[{"type":"mcp","name":"crm","url":"https://x.example.com","allowedTools":"all"}]`, "tools.0.allowedTools"},
		{`[{"type":"mcp","name":"crm","url":"https://x.example.com","extra":1}]`, "tools.0.extra"},
		{`[{"type":"mcp","name":"crm","url":"https://x.example.com"},{"type":"mcp","name":"crm","url":"https://y.example.com"}]`, "tools.1.name"},
		{`[{"type":"mcp","name":"new","url":"https://x.example.com","headers":{"Authorization":"********"}}]`, "tools.0.headers.Authorization"},
	} {
		_, err := s.Update(ctx, org, a.ID, Input{Tools: json.RawMessage(c.tools)})
		if k, f, msg := kindField(err); k != errs.Invalid || f != c.field {
			t.Errorf("%s: %v %q %q, want invalid %s", c.tools, k, f, msg, c.field)
		}
	}
}

// The secret key's rotation reseals the header values with the new key.
func TestMCPHeadersKeyRotation(t *testing.T) {
	if dbtest.Postgres() { // on PostgreSQL the key comes only from the environment
		t.Setenv(secretbox.EnvKey, secretbox.FormatKey(secretbox.NewKey()))
	}
	ctx := context.Background()
	db, org := openDB(t)
	s := New(Deps{Agents: db.Agents, KB: db.KB, Secrets: db.Secrets})
	a, err := s.Create(ctx, org, Input{Name: ptr("A"), Type: ptr("chat"),
		Tools: json.RawMessage(`[{"type":"mcp","name":"crm","url":"https://mcp.example.com/mcp","headers":{"X-Token":"tok-9"}}]`)})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := db.Agents.GetAgent(ctx, org, a.ID)
	var newKey []byte
	if dbtest.Postgres() {
		newKey = secretbox.NewKey()
	}
	if _, err := storage.RotateSecretKey(ctx, db, newKey); err != nil {
		t.Fatal(err)
	}
	after, _ := db.Agents.GetAgent(ctx, org, a.ID)
	if string(after.Tools) == string(before.Tools) || strings.Contains(string(after.Tools), "tok-9") {
		t.Fatalf("not resealed: %s", after.Tools)
	}
	servers, bad := MCPServers(db.Secrets, after.Tools)
	if len(bad) != 0 || len(servers) != 1 || servers[0].Headers["X-Token"] != "tok-9" {
		t.Errorf("after rotation: %+v %v", servers, bad)
	}
}
