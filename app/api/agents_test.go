package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/agents"
)

// agentList is the v1 list body.
type agentList struct {
	Success bool `json:"success"`
	Data    struct {
		Agents     []map[string]any `json:"agents"`
		Pagination struct {
			Limit, Offset, Total int
			HasMore              bool `json:"hasMore"`
		} `json:"pagination"`
	} `json:"data"`
}

// v1Error is the v1 agent error body.
type v1Error struct {
	Success *bool `json:"success"`
	Error   struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"error"`
}

// mustCreateAgent creates an agent through the API and returns its view.
func mustCreateAgent(t *testing.T, e *testEnv, key string, body map[string]any) agents.View {
	t.Helper()
	var out struct {
		Success bool        `json:"success"`
		Data    agents.View `json:"data"`
	}
	code, _, b := e.do("POST", "/api/v1/agents", key, body)
	if code != 201 {
		t.Fatalf("create agent: %d %s", code, b)
	}
	if err := json.Unmarshal(b, &out); err != nil || !out.Success || out.Data.ID == "" {
		t.Fatalf("create agent body %s: %v", b, err)
	}
	return out.Data
}

func listAgents(t *testing.T, e *testEnv, key, query string) agentList {
	t.Helper()
	var l agentList
	if code := e.doJSON("GET", "/api/v1/agents"+query, key, nil, &l); code != 200 || !l.Success {
		t.Fatalf("list %s: status %d", query, code)
	}
	return l
}

func ids(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["id"].(string)
	}
	return out
}

func TestAgentCreateAndRead(t *testing.T) {
	e := newTestEnv(t)
	voice := mustCreateAgent(t, e, e.key, map[string]any{
		"name": "  Front desk  ", "type": "voice", "model": "gpt-4o", "instructions": "Be kind.",
		"config":       map[string]any{"voice": "alloy", "speed": 1.25, "interruptionThreshold": 0.5},
		"tools":        []any{map[string]any{"id": "t1", "name": "lookup", "description": "Find a booking"}},
		"phoneNumbers": []string{"+1 (415) 555-0100", "+442071838750"},
		"specialty":    "bookings", "displayRole": "Receptionist",
	})
	if voice.Name != "Front desk" || voice.Status != "active" || voice.PhoneNumbers == nil ||
		strings.Join(*voice.PhoneNumbers, ",") != "+14155550100,+442071838750" {
		t.Fatalf("voice agent %+v", voice)
	}
	chat := mustCreateAgent(t, e, e.key, map[string]any{"name": "Widget", "type": "chat", "status": "training",
		"config": map[string]any{"theme": "dark", "primaryColor": "#1A2b3C", "position": "bottom-left",
			"greeting": "Hi!", "placeholder": "Ask me", "allowedDomains": []string{"Example.com", "*.shop.example"}}})

	code, _, b := e.do("GET", "/api/v1/agents/"+chat.ID, e.key, nil)
	if code != 200 {
		t.Fatalf("get chat: %d %s", code, b)
	}
	var raw struct {
		Success bool           `json:"success"`
		Data    map[string]any `json:"data"`
	}
	json.Unmarshal(b, &raw)
	if _, has := raw.Data["phoneNumbers"]; has {
		t.Errorf("chat agent shows phoneNumbers: %s", b)
	}
	cfg, _ := raw.Data["config"].(map[string]any)
	if cfg["primaryColor"] != "#1A2b3C" || fmt.Sprint(cfg["allowedDomains"]) != "[example.com *.shop.example]" || raw.Data["status"] != "training" {
		t.Errorf("chat agent %s", b)
	}
	for _, k := range []string{"id", "name", "type", "status", "model", "instructions", "config", "tools", "createdAt", "updatedAt", "specialty", "displayRole"} {
		if _, ok := raw.Data[k]; !ok {
			t.Errorf("chat agent lacks %s", k)
		}
	}

	var got struct{ Data agents.View }
	e.doJSON("GET", "/api/v1/agents/"+voice.ID, e.key, nil, &got)
	if got.Data.Instructions != "Be kind." || string(got.Data.Tools) != `[{"id":"t1","name":"lookup","description":"Find a booking"}]` ||
		string(got.Data.Config) != `{"interruptionThreshold":0.5,"speed":1.25,"voice":"alloy"}` {
		t.Fatalf("voice agent read back %+v", got.Data)
	}
	// The list items carry phoneNumbers for voice agents only.
	l := listAgents(t, e, e.key, "")
	for _, a := range l.Data.Agents {
		_, has := a["phoneNumbers"]
		if has != (a["type"] == "voice") {
			t.Errorf("list item %v: phoneNumbers present=%v", a["type"], has)
		}
	}
	// A voice agent without numbers still shows an empty array.
	bare := mustCreateAgent(t, e, e.key, map[string]any{"name": "b", "type": "voice"})
	if bare.PhoneNumbers == nil || len(*bare.PhoneNumbers) != 0 {
		t.Errorf("bare voice agent phoneNumbers %v", bare.PhoneNumbers)
	}
}

// Each filter alone and together returns exactly the matching agents,
// newest first.
func TestAgentListFilters(t *testing.T) {
	e := newTestEnv(t)
	type made struct{ id, typ, status string }
	var all []made
	for i, st := range []string{"active", "inactive", "training", "deployed", "active", "deployed", "training", "active"} {
		typ := []string{"voice", "chat"}[i%2]
		a := mustCreateAgent(t, e, e.key, map[string]any{"name": fmt.Sprint("agent ", i), "type": typ, "status": st})
		all = append([]made{{a.ID, typ, st}}, all...) // newest first
	}
	for _, typ := range []string{"", "voice", "chat"} {
		for _, st := range []string{"", "active", "inactive", "training", "deployed"} {
			var want []string
			for _, m := range all {
				if (typ == "" || m.typ == typ) && (st == "" || m.status == st) {
					want = append(want, m.id)
				}
			}
			q := "?type=" + typ + "&status=" + st
			l := listAgents(t, e, e.key, q)
			if got := ids(l.Data.Agents); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%s: got %v want %v", q, got, want)
			}
			if l.Data.Pagination.Total != len(want) || l.Data.Pagination.HasMore || l.Data.Pagination.Limit != 50 {
				t.Errorf("%s: pagination %+v", q, l.Data.Pagination)
			}
		}
	}
}

// Paging by offset += limit while hasMore visits every agent once, newest
// first; total counts the page only.
func TestAgentListPagingToTheEnd(t *testing.T) {
	e := newTestEnv(t)
	var want []string
	for i := 0; i < 23; i++ {
		a := mustCreateAgent(t, e, e.key, map[string]any{"name": fmt.Sprint("a", i), "type": "chat"})
		want = append([]string{a.ID}, want...)
	}
	for _, limit := range []int{1, 5, 10, 23, 100} {
		var got []string
		pages := 0
		for offset := 0; ; offset += limit {
			l := listAgents(t, e, e.key, fmt.Sprintf("?limit=%d&offset=%d", limit, offset))
			p := l.Data.Pagination
			if p.Limit != limit || p.Offset != offset || p.Total != len(l.Data.Agents) {
				t.Fatalf("limit %d offset %d: pagination %+v with %d items", limit, offset, p, len(l.Data.Agents))
			}
			got = append(got, ids(l.Data.Agents)...)
			pages++
			if !p.HasMore {
				break
			}
			if pages > 30 {
				t.Fatal("hasMore never ends")
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("limit %d: paged %d agents in another order than newest first", limit, len(got))
		}
		if wantPages := (23 + limit - 1) / limit; pages != wantPages {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, wantPages)
		}
	}
	// Past the end: an empty page, total 0, hasMore false.
	l := listAgents(t, e, e.key, "?offset=23")
	if len(l.Data.Agents) != 0 || l.Data.Pagination.Total != 0 || l.Data.Pagination.HasMore {
		t.Errorf("past the end: %+v", l.Data.Pagination)
	}
}

// Invalid query values are refused in the v1 agent error shape.
func TestAgentListQueryErrors(t *testing.T) {
	e := newTestEnv(t)
	for _, q := range []string{"limit=0", "limit=101", "limit=abc", "limit=-1", "limit=1.5", "offset=-1", "offset=x",
		"type=robot", "type=VOICE", "status=x", "status=deleted"} {
		var body v1Error
		code := e.doJSON("GET", "/api/v1/agents?"+q, e.key, nil, &body)
		name, _, _ := strings.Cut(q, "=")
		if code != 400 || body.Success == nil || *body.Success || body.Error.Code != "VALIDATION_ERROR" ||
			!strings.HasPrefix(body.Error.Message, name+":") {
			t.Errorf("%s: %d %+v", q, code, body)
		}
	}
	// limit=100 and limit=1 are the edges that pass; an empty value is absent.
	for _, q := range []string{"limit=100", "limit=1", "limit=&offset=", "type=&status="} {
		if code := e.doJSON("GET", "/api/v1/agents?"+q, e.key, nil, nil); code != 200 {
			t.Errorf("%s: %d", q, code)
		}
	}
	var body v1Error
	if code := e.doJSON("GET", "/api/v1/agents", "", nil, &body); code != 401 || body.Error.Code != "UNAUTHORIZED" {
		t.Errorf("no key: %d %+v", code, body)
	}
}

// Another organization's agent is 404 on every route, and absent from its lists.
func TestAgentTenantIsolation(t *testing.T) {
	e := newTestEnv(t)
	mine := mustCreateAgent(t, e, e.key, map[string]any{"name": "mine", "type": "voice"})
	_, otherKey := e.newOrg("other")
	theirs := mustCreateAgent(t, e, otherKey, map[string]any{"name": "theirs", "type": "chat"})
	for _, rq := range []struct{ method, path string }{
		{"GET", "/api/v1/agents/" + mine.ID}, {"PATCH", "/api/v1/agents/" + mine.ID}, {"DELETE", "/api/v1/agents/" + mine.ID},
		{"GET", "/api/v1/agents/not-a-uuid"}, {"GET", "/api/v1/agents/00000000-0000-4000-8000-000000000000"},
	} {
		var body v1Error
		code := e.doJSON(rq.method, rq.path, otherKey, map[string]any{"name": "stolen"}, &body)
		if code != 404 || body.Error.Code != "NOT_FOUND" || body.Error.Message != "agent not found" {
			t.Errorf("%s %s: %d %+v", rq.method, rq.path, code, body)
		}
	}
	if got := ids(listAgents(t, e, otherKey, "").Data.Agents); len(got) != 1 || got[0] != theirs.ID {
		t.Errorf("other org lists %v", got)
	}
	if got := ids(listAgents(t, e, e.key, "").Data.Agents); len(got) != 1 || got[0] != mine.ID {
		t.Errorf("default org lists %v", got)
	}
	var ws workerList
	e.doJSON("GET", "/api/v2/agents", otherKey, nil, &ws)
	if ws.Data.Count != 1 || ws.Data.Agents[0].ID != theirs.ID {
		t.Errorf("other org workers %+v", ws.Data)
	}
	var a struct{ Data agents.View }
	e.doJSON("GET", "/api/v1/agents/"+mine.ID, e.key, nil, &a)
	if a.Data.Name != "mine" || a.Data.Status != "active" {
		t.Errorf("the other org changed my agent: %+v", a.Data)
	}
}

// Delete sets inactive; the agent stays listed and readable.
func TestAgentSoftDelete(t *testing.T) {
	e := newTestEnv(t)
	a := mustCreateAgent(t, e, e.key, map[string]any{"name": "gone", "type": "voice", "phoneNumbers": []string{"+15551230000"}})
	var del struct {
		Success bool
		Data    agents.View
	}
	if code := e.doJSON("DELETE", "/api/v1/agents/"+a.ID, e.key, nil, &del); code != 200 || !del.Success || del.Data.Status != "inactive" {
		t.Fatalf("delete: %d %+v", code, del)
	}
	if code := e.doJSON("DELETE", "/api/v1/agents/"+a.ID, e.key, nil, nil); code != 200 {
		t.Errorf("second delete: %d", code)
	}
	l := listAgents(t, e, e.key, "")
	if len(l.Data.Agents) != 1 || l.Data.Agents[0]["status"] != "inactive" {
		t.Errorf("after delete the list shows %v", l.Data.Agents)
	}
	if got := ids(listAgents(t, e, e.key, "?status=inactive").Data.Agents); len(got) != 1 {
		t.Errorf("status=inactive lists %v", got)
	}
	if got := listAgents(t, e, e.key, "?status=active").Data.Agents; len(got) != 0 {
		t.Errorf("status=active still lists the deleted agent")
	}
	var ws workerList
	e.doJSON("GET", "/api/v2/agents", e.key, nil, &ws)
	if ws.Data.Agents[0].WorkforceStatus != "inactive" || ws.Data.Agents[0].Status != "inactive" {
		t.Errorf("worker %+v", ws.Data.Agents[0])
	}
	// It can be brought back by PATCH.
	var up struct{ Data agents.View }
	if code := e.doJSON("PATCH", "/api/v1/agents/"+a.ID, e.key, map[string]any{"status": "active"}, &up); code != 200 || up.Data.Status != "active" {
		t.Errorf("reactivate: %d %+v", code, up.Data)
	}
}

// PATCH changes only the fields present and validates the merged agent.
func TestAgentPatch(t *testing.T) {
	e := newTestEnv(t)
	a := mustCreateAgent(t, e, e.key, map[string]any{"name": "n", "type": "voice", "model": "m1", "instructions": "i1",
		"config": map[string]any{"voice": "alloy", "maxConcurrentCalls": 2}, "phoneNumbers": []string{"+15551230000"}})
	var up struct{ Data agents.View }
	if code := e.doJSON("PATCH", "/api/v1/agents/"+a.ID, e.key, map[string]any{"model": "m2", "name": nil}, &up); code != 200 {
		t.Fatalf("patch: %d", code)
	}
	if up.Data.Model != "m2" || up.Data.Name != "n" || up.Data.Instructions != "i1" || string(up.Data.Config) != `{"maxConcurrentCalls":2,"voice":"alloy"}` ||
		up.Data.CreatedAt != a.CreatedAt || (*up.Data.PhoneNumbers)[0] != "+15551230000" {
		t.Fatalf("patched %+v", up.Data)
	}
	// voice -> chat keeping the voice config or the numbers is refused ...
	var eb v1Error
	if code := e.doJSON("PATCH", "/api/v1/agents/"+a.ID, e.key, map[string]any{"type": "chat"}, &eb); code != 400 ||
		!strings.HasPrefix(eb.Error.Message, "config.maxConcurrentCalls: not a setting of a chat agent") {
		t.Errorf("type change with voice config: %d %+v", code, eb)
	}
	if code := e.doJSON("PATCH", "/api/v1/agents/"+a.ID, e.key, map[string]any{"type": "chat", "config": map[string]any{}}, &eb); code != 400 ||
		eb.Error.Message != "phoneNumbers: only voice agents have phone numbers" {
		t.Errorf("type change with numbers: %d %+v", code, eb)
	}
	// ... and accepted with both replaced; nothing of the refused tries was kept.
	up = struct{ Data agents.View }{}
	if code := e.doJSON("PATCH", "/api/v1/agents/"+a.ID, e.key,
		map[string]any{"type": "chat", "config": map[string]any{"theme": "light"}, "phoneNumbers": []string{}}, &up); code != 200 {
		t.Fatalf("type change: %d", code)
	}
	if up.Data.Type != "chat" || up.Data.PhoneNumbers != nil || string(up.Data.Config) != `{"theme":"light"}` || up.Data.Model != "m2" {
		t.Errorf("after type change %+v", up.Data)
	}
}
