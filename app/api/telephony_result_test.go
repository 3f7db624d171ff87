package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/storage/callstore"
)

// POST /api/v1/calls/{id}/result: fields replace, metadata merges under
// metadata.result, GET shows it all, lists do not carry the transcript.
func TestTelephonyCallResult(t *testing.T) {
	e := newTestEnv(t, fastSim(50*time.Millisecond))
	agent := e.voiceAgent(e.orgID)
	id := e.outbound(e.key, agent.ID, "+14155550100")
	if c := e.waitFinal(e.key, id, 10*time.Second); c.Status != "completed" {
		t.Fatalf("sim call: %s", c.Status)
	}
	var before struct{ Data map[string]any }
	e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &before)
	if _, ok := before.Data["transcript"]; !ok || before.Data["transcript"] != nil || before.Data["outcome"] != nil {
		t.Fatalf("GET before any result: transcript %v outcome %v", before.Data["transcript"], before.Data["outcome"])
	}

	post := func(body any) (int, map[string]any) {
		t.Helper()
		var out struct {
			Data  map[string]any
			Error struct {
				Message string
				Code    any
			}
		}
		code := e.doJSON("POST", "/api/v1/calls/"+id+"/result", e.key, body, &out)
		if code != 200 {
			return code, map[string]any{"message": out.Error.Message, "code": out.Error.Code}
		}
		return code, out.Data
	}
	code, rec := post(map[string]any{
		"summary": "  Customer\u200b booked a demo ",
		"transcript": []map[string]any{
			{"role": "agent", "text": "Hi, this is Ada.", "at": "2026-06-10T14:00:01Z"},
			{"role": "user", "text": "Hello", "at": "2026-06-10T14:00:03.5-07:00"},
		},
		"outcome":  "demo_booked",
		"metadata": map[string]any{"score": 9, "tags": map[string]any{"lead": "hot"}},
	})
	if code != 200 {
		t.Fatalf("result: %d %v", code, rec)
	}
	if rec["summary"] != "Customer booked a demo" || rec["outcome"] != "demo_booked" || rec["resultUpdatedAt"] == nil {
		t.Errorf("record: summary %q outcome %v updated %v", rec["summary"], rec["outcome"], rec["resultUpdatedAt"])
	}
	tr, _ := json.Marshal(rec["transcript"])
	if want := `[{"at":"2026-06-10T14:00:01.000Z","role":"agent","text":"Hi, this is Ada."},{"at":"2026-06-10T21:00:03.500Z","role":"user","text":"Hello"}]`; string(tr) != want {
		t.Errorf("transcript %s\nwant %s", tr, want)
	}

	// A second write: only the given fields change; metadata merges.
	code, rec = post(map[string]any{"outcome": "callback_requested", "metadata": map[string]any{"tags": map[string]any{"owner": "bob"}}})
	if code != 200 {
		t.Fatalf("second result: %d %v", code, rec)
	}
	meta, _ := json.Marshal(rec["metadata"].(map[string]any)["result"])
	if string(meta) != `{"score":9,"tags":{"lead":"hot","owner":"bob"}}` {
		t.Errorf("metadata.result %s", meta)
	}
	if rec["metadata"].(map[string]any)["caller_id"] == nil {
		t.Errorf("the call's own metadata was lost: %v", rec["metadata"])
	}
	if rec["summary"] != "Customer booked a demo" || rec["outcome"] != "callback_requested" {
		t.Errorf("after the second write: summary %v outcome %v", rec["summary"], rec["outcome"])
	}
	if n := len(rec["transcript"].([]any)); n != 2 {
		t.Errorf("transcript has %d items after a write without one", n)
	}
	var list struct {
		Data struct{ Calls []map[string]any }
	}
	e.doJSON("GET", "/api/v1/calls", e.key, nil, &list)
	if len(list.Data.Calls) != 1 || list.Data.Calls[0]["summary"] != "Customer booked a demo" {
		t.Fatalf("list %v", list.Data.Calls)
	}
	if _, ok := list.Data.Calls[0]["transcript"]; ok {
		t.Error("lists carry transcripts")
	}
}

// Validation answers 400 in the call family's shape; another organization's
// call and a missing call are 404; a call never dialled is 409.
func TestTelephonyCallResultErrors(t *testing.T) {
	e := newTestEnv(t, fastSim(50*time.Millisecond))
	agent := e.voiceAgent(e.orgID)
	id := e.outbound(e.key, agent.ID, "+14155550100")
	simSummary := e.waitFinal(e.key, id, 10*time.Second).Summary // the sim writes one
	at := "2026-06-10T14:00:00Z"
	many := make([]map[string]any, 2001)
	for i := range many {
		many[i] = map[string]any{"role": "user", "text": "x", "at": at}
	}
	cases := []struct {
		name string
		body any
		want string
	}{
		{"empty object", map[string]any{}, "nothing to record"},
		{"only null metadata", `{"metadata":null}`, "nothing to record"},
		{"empty body", "", "request body is empty"},
		{"not an object", `[1]`, "must be a JSON object"},
		{"malformed", `{"summary":`, "malformed JSON"},
		{"summary type", map[string]any{"summary": 5}, "summary: must be a string"},
		{"empty summary", map[string]any{"summary": " \u200b "}, "summary must not be empty"},
		{"long summary", map[string]any{"summary": strings.Repeat("é", 20001)}, "summary is too long (20001 characters, max 20000)"},
		{"transcript type", map[string]any{"transcript": "hello"}, "transcript: must be an array"},
		{"too many items", map[string]any{"transcript": many}, "transcript has 2001 items, max 2000"},
		{"bad role", map[string]any{"transcript": []map[string]any{{"role": "bot", "text": "x", "at": at}}}, "transcript[0].role must be agent, user, system or tool"},
		{"no role", map[string]any{"transcript": []map[string]any{{"text": "x", "at": at}}}, "transcript[0].role must be"},
		{"no text", map[string]any{"transcript": []map[string]any{{"role": "user", "at": at}}}, "transcript[0].text is required"},
		{"long text", map[string]any{"transcript": []map[string]any{{"role": "user", "text": strings.Repeat("a", 20001), "at": at}}}, "transcript[0].text is too long"},
		{"no at", map[string]any{"transcript": []map[string]any{{"role": "user", "text": "x"}}}, "transcript[0].at is required"},
		{"bad at", map[string]any{"transcript": []map[string]any{{"role": "tool", "text": "", "at": at}, {"role": "user", "text": "x", "at": "yesterday"}}}, "transcript[1].at must be an RFC 3339"},
		{"outcome upper", map[string]any{"outcome": "Booked"}, "outcome must be a label"},
		{"outcome long", map[string]any{"outcome": strings.Repeat("a", 65)}, "outcome must be a label"},
		{"outcome empty", map[string]any{"outcome": ""}, "outcome must be a label"},
		{"metadata type", map[string]any{"metadata": []int{1}}, "metadata: must be an object"},
	}
	for _, c := range cases {
		var out struct {
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		code := e.doJSON("POST", "/api/v1/calls/"+id+"/result", e.key, c.body, &out)
		if code != 400 || out.Error.Code != 400 || !strings.Contains(out.Error.Message, c.want) {
			t.Errorf("%s: %d %+v, want 400 containing %q", c.name, code, out.Error, c.want)
		}
	}
	if c := e.getCall(e.key, id); c.Summary == nil || simSummary == nil || *c.Summary != *simSummary {
		t.Errorf("a refused result changed the call: summary %v", c.Summary)
	}

	_, otherKey := e.newOrg("other")
	ok := map[string]any{"outcome": "done"}
	for name, path := range map[string]string{
		"another org's call": "/api/v1/calls/" + id + "/result",
		"missing call":       "/api/v1/calls/00000000-0000-4000-8000-000000000000/result",
	} {
		key := otherKey
		if name == "missing call" {
			key = e.key
		}
		var out struct {
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		if code := e.doJSON("POST", path, key, ok, &out); code != 404 || out.Error.Code != 404 || out.Error.Message != "call not found" {
			t.Errorf("%s: %d %+v", name, code, out)
		}
	}
	if code, _, _ := e.do("POST", "/api/v1/calls/"+id+"/result", "", ok); code != 401 {
		t.Errorf("no key: %d", code)
	}

	later, err := e.db.Calls.CreateCalls(context.Background(), []callstore.Call{{OrgID: e.orgID, AgentID: agent.ID,
		PhoneNumber: "+14155550199", Metadata: json.RawMessage(`{}`), DueAt: time.Now().Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, b := e.do("POST", "/api/v1/calls/"+later[0].ID+"/result", e.key, ok); code != 409 {
		t.Errorf("call not dialled yet: %d %s", code, b)
	}

	// The webhook route is not served without --dialer livekit.
	if code, _, _ := e.do("POST", "/api/v1/telephony/livekit/webhook", "", `{"event":"room_finished"}`); code != 404 {
		t.Errorf("webhook with --dialer sim: %d", code)
	}
}
