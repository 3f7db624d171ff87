package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// A conversation without messages reads "messages": [] (clients index it
// without a nil check), while a list leaves messages out.
func TestConversationEmptyMessages(t *testing.T) {
	e := newConvEnv(t, false, nil)
	id := e.startConversation(e.key, e.agentID)
	code, _, b := e.do("GET", "/api/v1/conversations/"+id, e.key, nil)
	var out struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	json.Unmarshal(b, &out)
	if code != 200 || string(out.Data["messages"]) != "[]" {
		t.Fatalf("empty conversation: %d %s", code, b)
	}
	_, _, b = e.do("GET", "/api/v1/conversations", e.key, nil)
	var l struct {
		Data struct {
			Conversations []map[string]json.RawMessage `json:"conversations"`
		} `json:"data"`
	}
	json.Unmarshal(b, &l)
	if len(l.Data.Conversations) != 1 || l.Data.Conversations[0]["messages"] != nil {
		t.Fatalf("list: %s", b)
	}
}

// A model service's refusal reaches an OpenAI client as a 502 naming the
// service, the model and its status, without the service's body.
func TestOpenAIUpstreamStatus(t *testing.T) {
	e := newConvEnv(t, true, nil)
	for _, stream := range []bool{false, true} {
		e.model.Push(llmtest.Reply{Status: 401})
		code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": e.agentID, "stream": stream,
			"messages": []any{map[string]any{"role": "user", "content": "x"}}})
		var out struct {
			Error struct{ Message, Type string }
		}
		json.Unmarshal(b, &out)
		if code != 502 || !strings.HasPrefix(out.Error.Message, "model service openai at 127.0.0.1:") ||
			!strings.HasSuffix(out.Error.Message, " (scripted) answered HTTP 401") || strings.Contains(string(b), "scripted failure") {
			t.Fatalf("stream %v: %d %s", stream, code, b)
		}
	}
}

// Fields agentd cannot honour are a 400 in OpenAI's shape naming the
// parameter, and nothing reaches the model: n > 1, logprobs, image or
// audio parts, a caller tool named like one agentd runs.
func TestOpenAIRefusesWhatItCannotHonour(t *testing.T) {
	e := newConvEnv(t, true, nil)
	user := map[string]any{"role": "user", "content": "When do you open?"}
	fn := func(name string) []any {
		return []any{map[string]any{"type": "function", "function": map[string]any{"name": name, "parameters": map[string]any{"type": "object"}}}}
	}
	for _, c := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"n": 2}, "n"},
		{map[string]any{"logprobs": true}, "logprobs"},
		{map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "What is this?"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}}}}}}, "messages.0.content.1.type"},
		{map[string]any{"messages": []any{user, map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "AAAA", "format": "wav"}}}}}}, "messages.1.content.0.type"},
		{map[string]any{"tools": append(fn("hang_up"), fn("search_knowledge")...)}, "tools.1.function.name"},
	} {
		body := map[string]any{"model": e.agentID, "messages": []any{user}}
		for k, v := range c.body {
			body[k] = v
		}
		code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, body)
		var out struct {
			Error struct {
				Message, Type, Param string
			}
		}
		json.Unmarshal(b, &out)
		if code != 400 || out.Error.Type != "invalid_request_error" || out.Error.Param != c.param || out.Error.Message == "" {
			t.Errorf("%v: %d %s", c.body, code, b)
		}
	}
	if n := e.model.Requests.Load(); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
	// What it can honour still passes: n 1, logprobs false, a caller tool of its own name.
	e.model.Push(llmtest.Reply{Content: "At 7:00."})
	if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": e.agentID,
		"messages": []any{user}, "n": 1, "logprobs": false, "tools": fn("hang_up")}); code != 200 {
		t.Fatalf("n 1: %d %s", code, b)
	}
}

// When the model service reports no usage, agentd counts it with its own
// tokenizer, streamed and not; the builtin engine counts too.
func TestOpenAIUsageCounted(t *testing.T) {
	type usage struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
	}
	check := func(name string, u usage) {
		t.Helper()
		if u.Prompt < 8 || u.Completion < 3 || u.Total != u.Prompt+u.Completion {
			t.Errorf("%s: usage %+v", name, u)
		}
	}
	ask := func(e *convEnv, stream bool) usage {
		t.Helper()
		body := map[string]any{"model": e.agentID, "stream": stream, "messages": []any{map[string]any{"role": "user", "content": "When does the bakery open?"}}}
		if stream {
			body["stream_options"] = map[string]any{"include_usage": true}
		}
		code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, body)
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		var out struct{ Usage *usage }
		if !stream {
			json.Unmarshal(b, &out)
		} else {
			for _, ev := range readSSE(t, b) {
				if ev.data != "[DONE]" {
					json.Unmarshal([]byte(ev.data), &out)
				}
			}
		}
		if out.Usage == nil {
			t.Fatalf("no usage: %s", b)
		}
		return *out.Usage
	}
	e := newConvEnv(t, true, nil)
	for _, stream := range []bool{false, true} {
		e.model.Push(llmtest.Reply{Content: "The bakery opens at 7:00 from Monday to Saturday.", NoUsage: true})
		check(map[bool]string{false: "whole", true: "streamed"}[stream], ask(e, stream))
	}
	// Reported usage is kept as reported.
	e.model.Push(llmtest.Reply{Content: "At 7:00.", PromptTokens: 500, CompletionTokens: 4})
	if u := ask(e, false); u.Prompt != 500 || u.Completion != 4 {
		t.Fatalf("reported usage replaced: %+v", u)
	}
	b := newConvEnv(t, false, nil)
	check("builtin", ask(b, false))
	check("builtin streamed", ask(b, true))
}

// models.retrieve: an agent that can answer is a model; an unknown,
// inactive or other organization's agent is 404 in OpenAI's shape.
func TestOpenAIModelRetrieve(t *testing.T) {
	e := newConvEnv(t, false, nil)
	code, b := e.bearer("GET", "/api/v1/openai/models/"+e.agentID, e.key, nil)
	var m struct{ ID, Object, Name, OwnedBy string }
	json.Unmarshal(b, &m)
	if code != 200 || m.ID != e.agentID || m.Object != "model" || m.Name != "Baker" {
		t.Fatalf("%d %s", code, b)
	}
	_, otherKey := e.newOrg("other")
	other := e.createAgent(otherKey, map[string]any{"name": "O", "type": "chat"})
	e.doJSON("DELETE", "/api/v1/agents/"+e.agentID, e.key, nil, nil)
	for _, c := range []struct{ id, key string }{{"nope", e.key}, {other, e.key}, {e.agentID, e.key}} {
		code, b := e.bearer("GET", "/api/v1/openai/models/"+c.id, c.key, nil)
		if code != 404 || !strings.Contains(string(b), `"type":"not_found_error"`) {
			t.Errorf("%s: %d %s", c.id, code, b)
		}
	}
	if code, b := e.bearer("GET", "/api/v1/openai/models/"+other, "", nil); code != 401 {
		t.Errorf("no key: %d %s", code, b)
	}
}
