package api

import (
	"encoding/json"
	"testing"
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
