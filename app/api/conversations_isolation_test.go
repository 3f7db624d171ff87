package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/storage/agentstore"
)

// Every conversation route keeps organizations apart: another
// organization's agent, conversation and collection are not found, and an
// agent never retrieves from another organization's collection, even one
// written into its knowledge behind the API's back.
func TestConversationTenantIsolation(t *testing.T) {
	e := newConvEnv(t, false, nil)
	convA := e.startConversation(e.key, e.agentID)
	e.say(e.key, convA, "When does the bakery open?")
	orgB, keyB := e.newOrg("other")

	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/v1/conversations", map[string]any{"agentId": e.agentID}},
		{"GET", "/api/v1/conversations/" + convA, nil},
		{"POST", "/api/v1/conversations/" + convA + "/messages", map[string]any{"content": "When does the bakery open?"}},
		{"POST", "/api/v1/conversations/" + convA + "/end", nil},
	} {
		if code, _, b := e.do(c.method, c.path, keyB, c.body); code != 404 {
			t.Errorf("%s %s as another org: %d %s", c.method, c.path, code, b)
		}
	}
	var l conversationListBody
	if code := e.doJSON("GET", "/api/v1/conversations?agentId="+e.agentID, keyB, nil, &l); code != 200 || l.Data.Total != 0 {
		t.Fatalf("another org lists A's conversations: %d %+v", code, l)
	}
	if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", keyB, map[string]any{"model": e.agentID,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}); code != 404 {
		t.Fatalf("completion with A's agent as B: %d %s", code, b)
	}
	if code, b := e.bearer("GET", "/api/v1/openai/models", keyB, nil); code != 200 || strings.Contains(string(b), e.agentID) {
		t.Fatalf("B's models list A's agent: %d %s", code, b)
	}
	// The Responses API: A's agent is not found for B, and A's stored
	// response is unknown to B, as previous_response_id or item_reference.
	var respA struct {
		ID     string
		Output []struct{ ID string }
	}
	if code, b := e.bearer("POST", "/api/v1/openai/responses", e.key, map[string]any{"model": e.agentID, "input": "When does the bakery open?"}); code != 200 || json.Unmarshal(b, &respA) != nil || len(respA.Output) != 1 {
		t.Fatalf("A's response: %d %s", code, b)
	}
	if code, b := e.bearer("POST", "/api/v1/openai/responses", keyB, map[string]any{"model": e.agentID, "input": "hi"}); code != 404 {
		t.Fatalf("response with A's agent as B: %d %s", code, b)
	}
	agentRB := e.createAgent(keyB, map[string]any{"name": "RB", "type": "chat"})
	for _, body := range []map[string]any{
		{"model": agentRB, "previous_response_id": respA.ID, "input": "and then?"},
		{"model": agentRB, "input": []any{map[string]any{"type": "item_reference", "id": respA.Output[0].ID}, map[string]any{"role": "user", "content": "and then?"}}},
	} {
		if code, b := e.bearer("POST", "/api/v1/openai/responses", keyB, body); code != 400 || strings.Contains(string(b), "7:00") {
			t.Fatalf("B naming A's response: %d %s", code, b)
		}
	}
	// Rotating B's tools secret leaves A's.
	ctx := context.Background()
	e.db.Conversations.RotateToolsSecret(ctx, e.orgID, "whsec_YQ==", time.Now(), time.Hour)
	if code := e.doJSON("POST", "/api/v2/tools/secret", keyB, nil, nil); code != 200 {
		t.Fatalf("rotate B: %d", code)
	}
	if s, _ := e.db.Conversations.ToolsSecret(ctx, e.orgID, time.Now()); s.Secret != "whsec_YQ==" {
		t.Fatalf("B's rotation changed A's secret")
	}

	// B cannot give its agent A's collection, on create or update.
	body := map[string]any{"name": "Thief", "type": "chat", "knowledge": map[string]any{"collectionIds": []string{e.col}}}
	if code, _, b := e.do("POST", "/api/v1/agents", keyB, body); code != 400 || !strings.Contains(string(b), "knowledge.collectionIds.0") {
		t.Fatalf("create with A's collection: %d %s", code, b)
	}
	agentB := e.createAgent(keyB, map[string]any{"name": "B", "type": "chat"})
	if code, _, b := e.do("PATCH", "/api/v1/agents/"+agentB, keyB, map[string]any{"knowledge": map[string]any{"collectionIds": []string{e.col}}}); code != 400 {
		t.Fatalf("update with A's collection: %d %s", code, b)
	}
	// Written behind the API's back, it still finds nothing of A's.
	if _, err := e.db.Agents.UpdateAgent(ctx, orgB, agentB, func(a *agentstore.Agent) error {
		a.Knowledge = json.RawMessage(`{"collectionIds":["` + e.col + `"],"topK":5,"listings":false}`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	convB := e.startConversation(keyB, agentB)
	code, m, b := e.say(keyB, convB, "When does the bakery open?")
	if code != 200 || strings.Contains(m.Content, "7:00") || len(m.Citations) != 0 {
		t.Fatalf("B's agent read A's collection: %d %s", code, b)
	}
}
