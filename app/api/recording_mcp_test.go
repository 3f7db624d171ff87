package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// A call's recording is served as audio/wav to its organization and is
// 404 to another one and for a call without one.
func TestCallRecordingRoute(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, _ := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: e.orgID, Name: "A", Type: "voice", Status: "active"})
	if err := e.db.Dashboard.SeedHistory(ctx, []dashstore.HistoryCall{{OrgID: e.orgID, AgentID: a.ID, Status: "completed", CreatedAt: time.Now()},
		{OrgID: e.orgID, AgentID: a.ID, Status: "completed", CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	p, _ := e.app.f.Calls.List(ctx, e.orgID, calls.ListOptions{})
	if len(p.Calls) != 2 {
		t.Fatalf("%d calls", len(p.Calls))
	}
	with, without := p.Calls[0].ID, p.Calls[1].ID
	f, err := e.app.f.Recordings.Start(e.orgID, with)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, 160)
	for range 10 {
		f.RecordFrame(frame, frame)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	code, h, body := e.do("GET", "/api/v1/calls/"+with+"/recording", e.key, nil)
	if code != 200 || h.Get("Content-Type") != "audio/wav" || !strings.HasPrefix(string(body), "RIFF") {
		t.Fatalf("recording: %d %s", code, h.Get("Content-Type"))
	}
	if code, _, _ := e.do("GET", "/api/v1/calls/"+without+"/recording", e.key, nil); code != 404 {
		t.Errorf("no recording: %d", code)
	}
	_, other := e.newOrg("other")
	if code, _, _ := e.do("GET", "/api/v1/calls/"+with+"/recording", other, nil); code != 404 {
		t.Errorf("another organization: %d", code)
	}
}

// /mcp answers an MCP initialize with the key as Bearer and refuses a
// request without a key.
func TestMCPRoute(t *testing.T) {
	e := newTestEnv(t)
	init := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}}}
	h := map[string]string{"Authorization": "Bearer " + e.key, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	code, _, body := e.doHeaders("POST", "/mcp", h, init)
	if code != 200 || !strings.Contains(string(body), "protocolVersion") {
		t.Fatalf("initialize: %d %s", code, body)
	}
	delete(h, "Authorization")
	if code, _, _ := e.doHeaders("POST", "/mcp", h, init); code != 401 {
		t.Errorf("no key: %d", code)
	}
}
