package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// agentWithPlan is the part of an agent's v1 body these tests read.
type agentWithPlan struct {
	Data struct {
		ID           string
		AnalysisPlan json.RawMessage `json:"analysisPlan"`
	}
}

// analysisPlan is a field of the agent: set on create and PATCH, read back
// on GET, removed with null, absent when the agent has none.
func TestAgentAnalysisPlanField(t *testing.T) {
	e := newAnalysisEnv(t, false)
	var created agentWithPlan
	if code := e.doJSON("POST", "/api/v1/agents", e.key, map[string]any{"name": "Planned", "type": "chat", "analysisPlan": bookingPlan}, &created); code != 201 {
		t.Fatalf("create: %d", code)
	}
	if !strings.Contains(string(created.Data.AnalysisPlan), `"rubric":"pass_fail"`) {
		t.Fatalf("create answer lacks the plan: %s", created.Data.AnalysisPlan)
	}
	var got agentWithPlan
	if e.doJSON("GET", "/api/v1/agents/"+created.Data.ID, e.key, nil, &got); string(got.Data.AnalysisPlan) != string(created.Data.AnalysisPlan) {
		t.Fatalf("GET plan %s, want %s", got.Data.AnalysisPlan, created.Data.AnalysisPlan)
	}
	// The same plan as the analysis-plan route keeps.
	var viaRoute struct {
		Data struct{ AnalysisPlan json.RawMessage }
	}
	if e.doJSON("GET", "/api/v1/agents/"+created.Data.ID+"/analysis-plan", e.key, nil, &viaRoute); string(viaRoute.Data.AnalysisPlan) != string(got.Data.AnalysisPlan) {
		t.Fatalf("analysis-plan route %s, agent %s", viaRoute.Data.AnalysisPlan, got.Data.AnalysisPlan)
	}

	// PATCH replaces it; a PATCH without it keeps it; null removes it.
	var patched agentWithPlan
	if code := e.doJSON("PATCH", "/api/v1/agents/"+created.Data.ID, e.key, map[string]any{"analysisPlan": map[string]any{"summary": map[string]any{"enabled": true}}}, &patched); code != 200 ||
		string(patched.Data.AnalysisPlan) != `{"summary":{"enabled":true}}` {
		t.Fatalf("patch: %d %s", code, patched.Data.AnalysisPlan)
	}
	if e.doJSON("PATCH", "/api/v1/agents/"+created.Data.ID, e.key, map[string]any{"name": "Renamed"}, &patched); string(patched.Data.AnalysisPlan) != `{"summary":{"enabled":true}}` {
		t.Fatalf("patch without a plan changed it: %s", patched.Data.AnalysisPlan)
	}
	code, _, b := e.do("PATCH", "/api/v1/agents/"+created.Data.ID, e.key, map[string]any{"analysisPlan": nil})
	if code != 200 || strings.Contains(string(b), "analysisPlan") {
		t.Fatalf("patch null: %d %s", code, b)
	}
	if _, _, b := e.do("GET", "/api/v1/agents/"+created.Data.ID, e.key, nil); strings.Contains(string(b), "analysisPlan") {
		t.Fatalf("a removed plan still shows: %s", b)
	}
}

// A bad plan on create or PATCH is 400 naming the field, and stores nothing.
func TestAgentAnalysisPlanFieldInvalid(t *testing.T) {
	e := newAnalysisEnv(t, false)
	bad := map[string]any{"structuredData": map[string]any{"schema": map[string]any{"type": "nope"}}}
	code, _, b := e.do("POST", "/api/v1/agents", e.key, map[string]any{"name": "Refused", "type": "chat", "analysisPlan": bad})
	if code != 400 || !strings.Contains(string(b), `"message":"analysisPlan.structuredData.schema is not a valid JSON Schema`) {
		t.Fatalf("create with a bad schema: %d %s", code, b)
	}
	if _, _, list := e.do("GET", "/api/v1/agents", e.key, nil); strings.Contains(string(list), "Refused") {
		t.Fatalf("a refused create stored the agent: %s", list)
	}
	code, _, b = e.do("PATCH", "/api/v1/agents/"+e.agentID, e.key, map[string]any{"name": "Changed", "analysisPlan": map[string]any{"successEvaluation": map[string]any{"rubric": "stars"}}})
	if code != 400 || !strings.Contains(string(b), `"message":"analysisPlan.successEvaluation.rubric must be`) {
		t.Fatalf("patch with a bad rubric: %d %s", code, b)
	}
	var got agentWithPlan
	_, _, raw := e.do("GET", "/api/v1/agents/"+e.agentID, e.key, nil)
	if json.Unmarshal(raw, &got); strings.Contains(string(raw), "Changed") || !strings.Contains(string(got.Data.AnalysisPlan), "pass_fail") {
		t.Fatalf("a refused patch changed the agent: %s", raw)
	}
}

// The analysis shows on the call and the conversation once there is one.
func TestAnalysisOnCallAndConversation(t *testing.T) {
	e := newAnalysisEnv(t, true)
	// Before any analysis the call has no field.
	id := e.outbound(e.key, e.agentID, "+14155550120")
	e.waitFinal(e.key, id, 10*time.Second)
	if _, _, b := e.do("GET", "/api/v1/calls/"+id, e.key, nil); strings.Contains(string(b), `"analysis"`) {
		t.Fatalf("a call without analysis shows one: %s", b)
	}
	e.model.Push(llmtest.Reply{Content: goodAnswer})
	body := map[string]any{"transcript": []map[string]any{{"role": "user", "text": "Book me for Tuesday.", "at": "2026-06-10T14:00:05Z"}}}
	if code, _, b := e.do("POST", "/api/v1/calls/"+id+"/result", e.key, body); code != 200 {
		t.Fatalf("result: %d %s", code, b)
	}
	want := e.waitAnalysis(e.key, id)
	var call struct {
		Data struct {
			ID       string
			Analysis *analysis.View
		}
	}
	if e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &call); call.Data.ID != id || call.Data.Analysis == nil || !sameView(*call.Data.Analysis, want) ||
		call.Data.Analysis.Status != "completed" || string(call.Data.Analysis.StructuredData) != `{"booked":true,"interest":"high"}` {
		t.Fatalf("call's analysis %+v, want %+v", call.Data.Analysis, want)
	}

	// A conversation: no field until it has ended and been analysed.
	e.model.Push(llmtest.Reply{Content: "Happy to help."}, llmtest.Reply{Content: goodAnswer})
	var conv struct{ Data struct{ ID string } }
	if code := e.doJSON("POST", "/api/v1/conversations", e.key, map[string]any{"agentId": e.agentID}, &conv); code != 201 {
		t.Fatalf("conversation: %d", code)
	}
	cid := conv.Data.ID
	if code, _, b := e.do("POST", "/api/v1/conversations/"+cid+"/messages", e.key, map[string]any{"content": "Book me a demo"}); code != 200 {
		t.Fatalf("message: %d %s", code, b)
	}
	if _, _, b := e.do("GET", "/api/v1/conversations/"+cid, e.key, nil); strings.Contains(string(b), `"analysis"`) {
		t.Fatalf("a conversation without analysis shows one: %s", b)
	}
	e.do("POST", "/api/v1/conversations/"+cid+"/end", e.key, nil)
	var out struct {
		Data struct {
			ID       string
			Analysis *analysis.View
		}
	}
	testkit.Eventually(t, 10*time.Second, func() bool {
		code := e.doJSON("GET", "/api/v1/conversations/"+cid, e.key, nil, &out)
		return code == 200 && out.Data.Analysis != nil && out.Data.Analysis.Status != "pending"
	}, "conversation analysis still pending")
	var direct struct{ Data analysis.View }
	e.doJSON("GET", "/api/v1/conversations/"+cid+"/analysis", e.key, nil, &direct)
	if out.Data.Analysis.Status != "completed" || !sameView(*out.Data.Analysis, direct.Data) {
		t.Fatalf("conversation's analysis %+v, route %+v", out.Data.Analysis, direct.Data)
	}

	// Another organization still finds neither the agent, the call nor the conversation.
	_, otherKey := e.newOrg("Other")
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/agents/" + e.agentID}, {"PATCH", "/api/v1/agents/" + e.agentID},
		{"GET", "/api/v1/calls/" + id}, {"GET", "/api/v1/conversations/" + cid},
	} {
		var body any
		if r.method == "PATCH" {
			body = map[string]any{"analysisPlan": nil}
		}
		if code, _, b := e.do(r.method, r.path, otherKey, body); code != 404 {
			t.Errorf("%s %s from another org: %d %s", r.method, r.path, code, b)
		}
	}
	var got agentWithPlan
	if e.doJSON("GET", "/api/v1/agents/"+e.agentID, e.key, nil, &got); !strings.Contains(string(got.Data.AnalysisPlan), "pass_fail") {
		t.Fatalf("another org's PATCH removed the plan: %s", got.Data.AnalysisPlan)
	}
}

func sameView(a, b analysis.View) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
