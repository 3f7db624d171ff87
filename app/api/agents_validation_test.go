package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateAgentsGolden = flag.Bool("update-agents", false, "rewrite testdata/golden/agents")

// agentValidationCases are bodies refused by POST /api/v1/agents (and, for
// the ones marked patch, by PATCH on a voice agent with a phone number).
var agentValidationCases = []struct {
	name  string
	patch bool
	body  any
}{
	{"empty_body", false, ""},
	{"not_json", false, "{"},
	{"trailing_data", false, `{"name":"a","type":"voice"} x`},
	{"name_missing", false, map[string]any{"type": "voice"}},
	{"name_blank", false, map[string]any{"name": "   ", "type": "voice"}},
	{"name_too_long", false, map[string]any{"name": strings.Repeat("n", 201), "type": "voice"}},
	{"name_not_string", false, map[string]any{"name": 5, "type": "voice"}},
	{"type_missing", false, map[string]any{"name": "a"}},
	{"type_robot", false, map[string]any{"name": "a", "type": "robot"}},
	{"status_unknown", false, map[string]any{"name": "a", "type": "voice", "status": "deleted"}},
	{"model_too_long", false, map[string]any{"name": "a", "type": "voice", "model": strings.Repeat("m", 201)}},
	{"instructions_too_long", false, map[string]any{"name": "a", "type": "voice", "instructions": strings.Repeat("i", 100_001)}},
	{"specialty_too_long", false, map[string]any{"name": "a", "type": "voice", "specialty": strings.Repeat("s", 201)}},
	{"config_not_object", false, map[string]any{"name": "a", "type": "voice", "config": []int{1}}},
	{"voice_speed_low", false, map[string]any{"name": "a", "type": "voice", "config": map[string]any{"speed": 0.2}}},
	{"voice_speed_high", false, map[string]any{"name": "a", "type": "voice", "config": map[string]any{"speed": 4.01}}},
	{"voice_speed_string", false, map[string]any{"name": "a", "type": "voice", "config": map[string]any{"speed": "fast"}}},
	{"voice_voice_empty", false, map[string]any{"name": "a", "type": "voice", "config": map[string]any{"voice": ""}}},
	{"voice_threshold_range", false, map[string]any{"name": "a", "type": "voice", "config": map[string]any{"interruptionThreshold": 2}}},
	{"voice_unknown_key", false, map[string]any{"name": "a", "type": "voice", "config": map[string]any{"theme": "dark"}}},
	{"chat_color_short", false, map[string]any{"name": "a", "type": "chat", "config": map[string]any{"primaryColor": "#fff"}}},
	{"chat_color_not_hex", false, map[string]any{"name": "a", "type": "chat", "config": map[string]any{"primaryColor": "#GG0000"}}},
	{"chat_position", false, map[string]any{"name": "a", "type": "chat", "config": map[string]any{"position": "middle"}}},
	{"chat_domains_not_array", false, map[string]any{"name": "a", "type": "chat", "config": map[string]any{"allowedDomains": "example.com"}}},
	{"chat_domain_url", false, map[string]any{"name": "a", "type": "chat", "config": map[string]any{"allowedDomains": []string{"ok.com", "https://x.com/"}}}},
	{"chat_greeting_number", false, map[string]any{"name": "a", "type": "chat", "config": map[string]any{"greeting": 1}}},
	{"chat_unknown_key", false, map[string]any{"name": "a", "type": "chat", "config": map[string]any{"maxConcurrentCalls": 2}}},
	{"tools_not_array", false, map[string]any{"name": "a", "type": "chat", "tools": map[string]any{"id": "x"}}},
	{"tool_not_object", false, map[string]any{"name": "a", "type": "chat", "tools": []any{"lookup"}}},
	{"tool_id_missing", false, map[string]any{"name": "a", "type": "chat", "tools": []any{map[string]any{"name": "n"}}}},
	{"tool_name_empty", false, map[string]any{"name": "a", "type": "chat", "tools": []any{map[string]any{"id": "t", "name": ""}}}},
	{"tool_description_number", false, map[string]any{"name": "a", "type": "chat", "tools": []any{map[string]any{"id": "t", "name": "n", "description": 3}}}},
	{"tool_unknown_key", false, map[string]any{"name": "a", "type": "chat", "tools": []any{map[string]any{"id": "t", "name": "n", "handler": "x"}}}},
	{"tool_url_not_http", false, map[string]any{"name": "a", "type": "chat", "tools": []any{map[string]any{"id": "t", "name": "n", "url": "x"}}}},
	{"tool_duplicate_id", false, map[string]any{"name": "a", "type": "chat", "tools": []any{map[string]any{"id": "t", "name": "n"}, map[string]any{"id": "t", "name": "m"}}}},
	{"phones_not_array", false, map[string]any{"name": "a", "type": "voice", "phoneNumbers": "+15551230000"}},
	{"phone_not_e164", false, map[string]any{"name": "a", "type": "voice", "phoneNumbers": []string{"+15551230000", "555-0100"}}},
	{"phone_leading_zero", false, map[string]any{"name": "a", "type": "voice", "phoneNumbers": []string{"+0123456"}}},
	{"phone_too_long", false, map[string]any{"name": "a", "type": "voice", "phoneNumbers": []string{"+1234567890123456"}}},
	{"phone_duplicate", false, map[string]any{"name": "a", "type": "voice", "phoneNumbers": []string{"+15551230000", "+1 555 123 0000"}}},
	{"phones_on_chat", false, map[string]any{"name": "a", "type": "chat", "phoneNumbers": []string{"+15551230000"}}},
	{"patch_name_blank", true, map[string]any{"name": ""}},
	{"patch_type_chat_keeps_phones", true, map[string]any{"type": "chat"}},
	{"patch_status_unknown", true, map[string]any{"status": "archived"}},
	{"patch_speed", true, map[string]any{"config": map[string]any{"speed": 0}}},
	{"patch_phone", true, map[string]any{"phoneNumbers": []string{"12345"}}},
}

// Every validation error is a 400 in the v1 agent shape; the bodies are
// pinned in testdata/golden/agents/validation.json (go test ./app -run
// AgentValidation -update-agents rewrites it).
func TestAgentValidationErrors(t *testing.T) {
	e := newTestEnv(t)
	target := mustCreateAgent(t, e, e.key, map[string]any{"name": "target", "type": "voice", "phoneNumbers": []string{"+15551230000"}})
	got := map[string]json.RawMessage{}
	for _, c := range agentValidationCases {
		method, path := "POST", "/api/v1/agents"
		if c.patch {
			method, path = "PATCH", "/api/v1/agents/"+target.ID
		}
		code, _, b := e.do(method, path, e.key, c.body)
		var body v1Error
		if err := json.Unmarshal(b, &body); err != nil || code != 400 || body.Success == nil || *body.Success ||
			body.Error.Code != "VALIDATION_ERROR" || body.Error.Message == "" {
			t.Errorf("%s: %d %s", c.name, code, b)
		}
		got[c.name] = json.RawMessage(bytes.TrimSpace(b))
	}
	out, _ := json.MarshalIndent(got, "", "  ")
	path := filepath.Join("..", "..", "testdata", "golden", "agents", "validation.json")
	if *updateAgentsGolden {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./app -run AgentValidation -update-agents)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), out) {
		t.Errorf("validation bodies differ from %s:\n%s", path, out)
	}
	// Nothing was created or changed by the refused requests.
	l := listAgents(t, e, e.key, "")
	if len(l.Data.Agents) != 1 || l.Data.Agents[0]["name"] != "target" || l.Data.Agents[0]["type"] != "voice" {
		t.Errorf("refused requests changed the agents: %v", l.Data.Agents)
	}
}

// A JSON value other than an object is refused (its message belongs to
// decode.go, so only the status and shape are checked here).
func TestAgentBodyNotObject(t *testing.T) {
	e := newTestEnv(t)
	for _, b := range []string{"[]", "3", `"x"`, "null"} {
		var body v1Error
		if code := e.doJSON("POST", "/api/v1/agents", e.key, b, &body); code != 400 || body.Error.Code != "VALIDATION_ERROR" {
			t.Errorf("%s: %d %+v", b, code, body)
		}
	}
}

// A body over 1 MiB is 413 in the v1 agent shape.
func TestAgentBodyTooLarge(t *testing.T) {
	e := newTestEnv(t)
	big := `{"name":"a","type":"voice","instructions":"` + strings.Repeat("x", 1<<20) + `"}`
	var body v1Error
	if code := e.doJSON("POST", "/api/v1/agents", e.key, big, &body); code != 413 || body.Error.Code != "PAYLOAD_TOO_LARGE" {
		t.Errorf("%d %+v", code, body)
	}
}
