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
		var out struct{ Error struct{ Message, Type string } }
		json.Unmarshal(b, &out)
		if code != 502 || !strings.HasPrefix(out.Error.Message, "model service openai at 127.0.0.1:") ||
			!strings.HasSuffix(out.Error.Message, " (scripted) answered HTTP 401") || strings.Contains(string(b), "scripted failure") {
			t.Fatalf("stream %v: %d %s", stream, code, b)
		}
	}
}
