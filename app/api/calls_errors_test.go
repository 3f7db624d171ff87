package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/storage/agentstore"
)

var updateCallsGolden = flag.Bool("update-calls", false, "rewrite testdata/golden/calls")

// Every 400/404/409/413/500 case of the call endpoints (API.md error table
// and DECISIONS.md), in the call error shape {error:{message, code}}. A few
// bodies are pinned by golden files.
func TestCallErrors(t *testing.T) {
	e := newTestEnv(t, fastSim(0))
	agent := e.voiceAgent(e.orgID)
	chat := e.voiceAgent(e.orgID, func(a *agentstore.Agent) { a.Type = "chat"; a.PhoneNumbers = nil })
	nophone := e.voiceAgent(e.orgID, func(a *agentstore.Agent) { a.PhoneNumbers = nil })
	inactive := e.voiceAgent(e.orgID, func(a *agentstore.Agent) { a.Status = "inactive" })
	training := e.voiceAgent(e.orgID, func(a *agentstore.Agent) { a.Status = "training" })
	otherOrg, otherKey := e.newOrg("other")
	foreign := e.voiceAgent(otherOrg)
	missing := "6f1d2c1e-0000-4000-8000-000000000000"
	one := []map[string]any{{"contactPhone": "+14155550100"}}
	many := make([]map[string]any, 1001)
	for i := range many {
		many[i] = map[string]any{"contactPhone": "+14155550100"}
	}
	type C = map[string]any
	cases := []struct {
		name, method, path, key string
		body                    any
		status                  int
		msg                     string
		golden                  string
	}{
		{"schedule no agentId", "POST", "/api/v1/calls/schedule", e.key, C{"contactPhone": "+14155550100"}, 400, "agentId is required", "schedule_missing_agent"},
		{"schedule no phone", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID}, 400, "contactPhone is required", ""},
		{"schedule phone not E.164", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "0415 555 0100"}, 400, "contactPhone must be an E.164", "schedule_bad_phone"},
		{"schedule bad scheduledAt", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "scheduledAt": "tomorrow"}, 400, "scheduledAt must be an ISO 8601", ""},
		{"schedule agent not voice", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": chat.ID, "contactPhone": "+14155550100"}, 400, "not a voice agent", ""},
		{"schedule agent no phone", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": nophone.ID, "contactPhone": "+14155550100"}, 400, "no phone number assigned", ""},
		{"schedule agent missing", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": missing, "contactPhone": "+14155550100"}, 404, "agent not found or access denied", "schedule_agent_not_found"},
		{"schedule agent other org", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": foreign.ID, "contactPhone": "+14155550100"}, 404, "agent not found", ""},
		{"schedule priority range", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "priority": 11}, 400, "priority must be an integer from 0", ""},
		{"schedule priority type", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "priority": "high"}, 400, "priority: must be an integer", ""},
		{"schedule both retry kinds", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "retrySchedule": []string{"2030-01-01T00:00:00Z"}, "retryIntervals": []C{{"value": 5, "unit": "minutes"}}}, 400, "not both", ""},
		{"schedule bad retry unit", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "retryIntervals": []C{{"value": 5, "unit": "weeks"}}}, 400, "retryIntervals[0].unit", ""},
		{"schedule bad metadata tz", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "callMetadata": C{"timezone": "Nowhere/City"}}, 400, "callMetadata.timezone", ""},
		{"schedule metadata tags type", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "callMetadata": C{"tags": "vip"}}, 400, "callMetadata.tags must be an array of strings", ""},
		{"schedule bad email", "POST", "/api/v1/calls/schedule", e.key, C{"agentId": agent.ID, "contactPhone": "+14155550100", "contactEmail": "nope"}, 400, "contactEmail must be an email", ""},
		{"schedule empty body", "POST", "/api/v1/calls/schedule", e.key, "", 400, "request body is empty", ""},
		{"schedule malformed", "POST", "/api/v1/calls/schedule", e.key, "{", 400, "malformed JSON", ""},
		{"schedule no key", "POST", "/api/v1/calls/schedule", "", C{}, 401, "", ""},
		{"batch no agentId", "POST", "/api/v1/calls/batch", e.key, C{"calls": one}, 400, "agentId is required", ""},
		{"batch no calls", "POST", "/api/v1/calls/batch", e.key, C{"agentId": agent.ID}, 400, "calls is required", "batch_missing_calls"},
		{"batch empty calls", "POST", "/api/v1/calls/batch", e.key, C{"agentId": agent.ID, "calls": []C{}}, 400, "calls must not be empty", ""},
		{"batch too many", "POST", "/api/v1/calls/batch", e.key, C{"agentId": agent.ID, "calls": many}, 400, "at most 1000", ""},
		{"batch bad localScheduleTime", "POST", "/api/v1/calls/batch", e.key, C{"agentId": agent.ID, "calls": one, "timezoneAwareConfig": C{"enabled": true, "localScheduleTime": "9am"}}, 400, "invalid timezone configuration: timezoneAwareConfig.localScheduleTime", ""},
		{"batch bad allowedDays", "POST", "/api/v1/calls/batch", e.key, C{"agentId": agent.ID, "calls": one, "timezoneAwareConfig": C{"enabled": true, "allowedDays": []int{7}}}, 400, "allowedDays", ""},
		{"batch bad retryConfig", "POST", "/api/v1/calls/batch", e.key, C{"agentId": agent.ID, "calls": one, "retryConfig": C{"maxRetries": 99}}, 400, "retryConfig.maxRetries", ""},
		{"batch agent missing", "POST", "/api/v1/calls/batch", e.key, C{"agentId": missing, "calls": one}, 404, "agent not found", ""},
		{"batch agent not voice", "POST", "/api/v1/calls/batch", e.key, C{"agentId": chat.ID, "calls": one}, 400, "not a voice agent", ""},
		{"outbound bad uuid", "POST", "/api/v1/calls/outbound", e.key, C{"agentId": "abc", "phoneNumber": "+14155550100"}, 400, "agentId must be a valid UUID", "outbound_bad_uuid"},
		{"outbound phone", "POST", "/api/v1/calls/outbound", e.key, C{"agentId": agent.ID, "phoneNumber": "+0123"}, 400, "phoneNumber must be an E.164", ""},
		{"outbound not voice", "POST", "/api/v1/calls/outbound", e.key, C{"agentId": chat.ID, "phoneNumber": "+14155550100"}, 400, "not a voice agent", ""},
		{"outbound inactive", "POST", "/api/v1/calls/outbound", e.key, C{"agentId": inactive.ID, "phoneNumber": "+14155550100"}, 400, "agent is not active", ""},
		{"outbound training", "POST", "/api/v1/calls/outbound", e.key, C{"agentId": training.ID, "phoneNumber": "+14155550100"}, 400, "agent is not active", ""},
		{"outbound agent missing", "POST", "/api/v1/calls/outbound", e.key, C{"agentId": missing, "phoneNumber": "+14155550100"}, 404, "agent not found", ""},
		{"outbound other org key", "POST", "/api/v1/calls/outbound", otherKey, C{"agentId": agent.ID, "phoneNumber": "+14155550100"}, 404, "agent not found", ""},
		{"get missing", "GET", "/api/v1/calls/" + missing, e.key, nil, 404, "call not found", "get_not_found"},
		{"list bad status", "GET", "/api/v1/calls?status=done", e.key, nil, 400, "not a call status", ""},
		{"list bad limit", "GET", "/api/v1/calls?limit=500", e.key, nil, 400, "limit must be from 1 to 100", ""},
		{"list bad sort", "GET", "/api/v1/calls?sortBy=phone", e.key, nil, 400, "sortBy must be", ""},
		{"list bad order", "GET", "/api/v1/calls?sortOrder=up", e.key, nil, 400, "sortOrder must be", ""},
		{"list bad from", "GET", "/api/v1/calls?from=yesterday", e.key, nil, 400, "from must be", ""},
		{"cancel missing", "DELETE", "/api/v1/calls/" + missing, e.key, nil, 404, "call not found", ""},
		{"outbound too large", "POST", "/api/v1/calls/outbound", e.key, `{"metadata":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "too large", ""},
	}
	for _, c := range cases {
		code, _, body := e.do(c.method, c.path, c.key, c.body)
		if code != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, code, c.status, body)
			continue
		}
		var eb struct {
			Error struct {
				Message string
				Code    int
			}
		}
		if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != c.status || !strings.Contains(eb.Error.Message, c.msg) {
			t.Errorf("%s: body %s, want code %d and message containing %q", c.name, body, c.status, c.msg)
		}
		if c.golden != "" {
			checkCallsGolden(t, c.golden, body)
		}
	}
	// 409: cancelling a finished call.
	id := e.outbound(e.key, agent.ID, "+14155550486")
	e.waitFinal(e.key, id, 5e9)
	code, _, body := e.do("DELETE", "/api/v1/calls/"+id, e.key, nil)
	if code != 409 || !strings.Contains(string(body), `"code":409`) {
		t.Fatalf("cancel finished: %d %s", code, body)
	}
	checkCallsGolden(t, "cancel_finished", body)
	// Another organization cannot read or cancel the call.
	if code, _, _ := e.do("GET", "/api/v1/calls/"+id, otherKey, nil); code != 404 {
		t.Errorf("other org GET: %d", code)
	}
}

func checkCallsGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "golden", "calls", name+".json")
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if *updateCallsGolden {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run with -update-calls)", name, err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(buf.Bytes())) {
		t.Errorf("%s: body\n%s\nwant\n%s", name, buf.Bytes(), want)
	}
}
