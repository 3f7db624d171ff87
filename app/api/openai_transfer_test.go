package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial/livekitdial"
	"github.com/agentd/agentd/internal/testkit/livekittest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/storage/agentstore"
)

// transferAgent is a voice agent with a cold and a warm destination.
func transferAgent(a *agentstore.Agent) {
	a.Config = json.RawMessage(`{"transferDestinations":[{"name":"Sales","number":"+14155550199","description":"quotes","mode":"cold"},` +
		`{"name":"Desk","sipUri":"sip:desk@pbx.example.com","mode":"warm"}]}`)
}

// liveKitCallOf places a call of agent through the fake and waits until
// it is active.
func liveKitCallOf(t *testing.T, e *convEnv, agentID, to string) (string, string) {
	t.Helper()
	id := e.outbound(e.key, agentID, to)
	e.waitCall(e.key, id, 10*time.Second, func(c callView) bool { return c.Status == "active" })
	return id, livekitdial.LiveKitRoomName(id, 1)
}

// transferScript answers a turn with a transfer_call to dest, then with
// what the model says once it has read the tool's result (kept in got).
func transferScript(e *convEnv, dest string, got *string) {
	e.model.Answer(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "tool" {
			*got = last.Text()
			return llmtest.Reply{Content: "Done."}
		}
		if !slicesContains(r.ToolNames(), "transfer_call") {
			return llmtest.Reply{Content: "no transfer_call offered"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_t", Name: "transfer_call",
			Arguments: `{"destination":"` + dest + `","reason":"wants a quote"}`}}}
	})
}

// transfersOf is the call read's transfers and its whole body.
func transfersOf(t *testing.T, e *convEnv, id string) ([]map[string]any, string) {
	t.Helper()
	_, _, body := e.do("GET", "/api/v1/calls/"+id, e.key, nil)
	var out struct {
		Data struct{ Transfers []map[string]any }
	}
	json.Unmarshal(body, &out)
	return out.Data.Transfers, string(body)
}

func (e *convEnv) eventTypes(types ...string) []string {
	e.t.Helper()
	q := ""
	for _, ty := range types {
		q += "&type=" + ty
	}
	var evs struct {
		Data struct {
			Events []struct {
				Type string `json:"type"`
			} `json:"events"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v2/events?"+q[1:], e.key, nil, &evs); code != 200 {
		e.t.Fatalf("events: %d", code)
	}
	var out []string
	for _, ev := range evs.Data.Events {
		out = append(out, ev.Type)
	}
	return out
}

// On a LiveKit call, a LiveKit worker's turn (x-agentd-call-id) gets
// agentd's own transfer_call: agentd runs it by TransferSIPParticipant,
// records the attempt on the call (transfers, call.transferred, a
// transcript line) and the model reads the outcome; the worker gets the
// answer, not the tool call.
func TestOpenAILiveKitTransfer(t *testing.T) {
	fake := livekittest.New(t)
	e := newConvEnv(t, true, nil, liveKitDialer(fake.URL, livekittest.TrunkID))
	agent := e.voiceAgent(e.orgID, transferAgent)
	id, room := liveKitCallOf(t, e, agent.ID, "+14155550123")
	var heard string
	transferScript(e, "sales", &heard)
	code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": agent.ID,
		"messages": []any{map[string]any{"role": "user", "content": "I want a quote"}}}, "x-agentd-call-id", id)
	var out struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content   string
				ToolCalls []any `json:"tool_calls"`
			}
		}
	}
	if json.Unmarshal(b, &out); code != 200 || len(out.Choices) != 1 || out.Choices[0].Message.Content != "Done." ||
		len(out.Choices[0].Message.ToolCalls) != 0 || out.Choices[0].FinishReason != "stop" {
		t.Fatalf("turn: %d %s", code, b)
	}
	if !strings.Contains(heard, `"outcome":"transferred"`) || !strings.Contains(heard, "Sales") {
		t.Errorf("the model read %s", heard)
	}
	want := `{"participant_identity":"sip-` + room + `","room_name":"` + room + `","transfer_to":"tel:+14155550199","play_dialtone":true}`
	if got := string(fake.Body("SIP/TransferSIPParticipant")); got != want {
		t.Errorf("TransferSIPParticipant body\n got %s\nwant %s", got, want)
	}
	ts, body := transfersOf(t, e, id)
	if len(ts) != 1 || ts[0]["destination"] != "Sales" || ts[0]["mode"] != "cold" || ts[0]["method"] != "refer" ||
		ts[0]["outcome"] != "transferred" || ts[0]["reason"] != "wants a quote" || ts[0]["at"] == nil {
		t.Fatalf("transfers %v", ts)
	}
	if !strings.Contains(body, "transfer_call: transferred to Sales (cold, refer)") {
		t.Errorf("no transcript line in the call read: %s", body)
	}
	if got := e.eventTypes("call.transferred", "call.transfer_failed"); len(got) != 1 || got[0] != "call.transferred" {
		t.Errorf("events %v", got)
	}
}

// A refused transfer (the target busy: LiveKit's Twirp error) is
// recorded as failed with call.transfer_failed and the model hears why;
// a warm destination is refused without asking LiveKit (cold only), on
// the Responses API too. Another organization cannot name the call, and
// a turn naming no call is not offered the tool.
func TestOpenAILiveKitTransferRefused(t *testing.T) {
	fake := livekittest.New(t)
	fake.Transfer = func(map[string]any) (int, string) {
		return livekittest.TwirpError(400, "invalid_argument", "sip status 486: Busy Here",
			map[string]string{"sip_status_code": "486", "sip_status": "Busy Here"})
	}
	e := newConvEnv(t, true, nil, liveKitDialer(fake.URL, livekittest.TrunkID))
	agent := e.voiceAgent(e.orgID, transferAgent)
	id, _ := liveKitCallOf(t, e, agent.ID, "+14155550123")
	var heard string
	transferScript(e, "Sales", &heard)
	if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": agent.ID,
		"messages": []any{map[string]any{"role": "user", "content": "sales please"}}}, "x-agentd-call-id", id); code != 200 {
		t.Fatalf("turn: %d %s", code, b)
	}
	if !strings.Contains(heard, "did not go through (busy)") || !strings.Contains(heard, "SIP 486 Busy Here") {
		t.Errorf("the model read %s", heard)
	}
	transferScript(e, "Desk", &heard)
	if code, b := e.bearer("POST", "/api/v1/openai/responses", e.key, map[string]any{"model": agent.ID,
		"input": "the desk then"}, "x-agentd-call-id", id); code != 200 {
		t.Fatalf("responses turn: %d %s", code, b)
	}
	if !strings.Contains(heard, "warm transfer is not available on LiveKit calls (cold transfers only)") {
		t.Errorf("the model read %s", heard)
	}
	ts, _ := transfersOf(t, e, id)
	if len(ts) != 2 || ts[0]["outcome"] != "busy" || !strings.Contains(ts[0]["detail"].(string), "486") ||
		ts[1]["destination"] != "Desk" || ts[1]["mode"] != "warm" || ts[1]["outcome"] != "unsupported" {
		t.Fatalf("transfers %v", ts)
	}
	if got := e.eventTypes("call.transferred", "call.transfer_failed"); strings.Join(got, ",") != "call.transfer_failed,call.transfer_failed" {
		t.Errorf("events %v", got)
	}
	n := len(fake.Methods())

	// Another organization's agent naming the call: 404 as for any call of
	// another organization, the model and LiveKit never asked.
	asked := e.model.Requests.Load()
	_, otherKey := e.newOrg("other")
	otherAgent := e.createAgent(otherKey, map[string]any{"name": "O", "type": "voice", "config": map[string]any{
		"transferDestinations": []any{map[string]any{"name": "Sales", "number": "+14155550199"}}}})
	if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", otherKey, map[string]any{"model": otherAgent,
		"messages": []any{map[string]any{"role": "user", "content": "sales"}}}, "x-agentd-call-id", id); code != 404 || !strings.Contains(string(b), "call not found") {
		t.Fatalf("another org's call: %d %s", code, b)
	}
	if e.model.Requests.Load() != asked || len(fake.Methods()) != n {
		t.Errorf("the other organization's turn reached the model or LiveKit")
	}

	// Without x-agentd-call-id no call is named: no transfer_call.
	transferScript(e, "Sales", &heard)
	_, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": agent.ID,
		"messages": []any{map[string]any{"role": "user", "content": "sales"}}})
	if !strings.Contains(string(b), "no transfer_call offered") {
		t.Errorf("transfer_call offered without a call: %s", b)
	}
	// A caller tool of the same name would be ambiguous: refused.
	if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": agent.ID,
		"messages": []any{map[string]any{"role": "user", "content": "sales"}},
		"tools":    []any{map[string]any{"type": "function", "function": map[string]any{"name": "transfer_call"}}}}, "x-agentd-call-id", id); code != 400 ||
		!strings.Contains(string(b), "tools.0.function.name") {
		t.Errorf("caller's transfer_call: %d %s", code, b)
	}
}
