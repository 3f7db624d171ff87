package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// An agent with listings: builtin quotes the matching listing with its
// price, and with a model the listing is a passage of the prompt and the
// model may call search_listings.
func TestConversationListings(t *testing.T) {
	e := newConvEnv(t, false, map[string]any{"knowledge": map[string]any{"listings": true}})
	e.sync(e.key, false, listing("villa-9", "Seaside villa with pool", "description", "Four bedrooms above the beach in Cascais.", "price", json.Number("850000")),
		listing("flat-2", "City flat", "description", "Two rooms near Rossio square."))
	id := e.startConversation(e.key, e.agentID)
	code, m, b := e.say(e.key, id, "Do you have a villa with a pool?")
	if code != 200 || !strings.Contains(m.Content, `From "Seaside villa with pool"`) || !strings.Contains(m.Content, "850000") ||
		len(m.Citations) == 0 || m.Citations[0].ExternalID != "villa-9" {
		t.Fatalf("builtin listing answer: %d %s", code, b)
	}

	s := newConvEnv(t, true, map[string]any{"knowledge": map[string]any{"listings": true}})
	s.sync(s.key, false, listing("villa-9", "Seaside villa with pool", "description", "Four bedrooms above the beach in Cascais."))
	s.model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "search_listings", Arguments: `{"query":"villa pool"}`}}},
		llmtest.Reply{Content: "The seaside villa."})
	id = s.startConversation(s.key, s.agentID)
	if code, m, b := s.say(s.key, id, "Anything by the sea?"); code != 200 || m.Content != "The seaside villa." {
		t.Fatalf("model answer: %d %s", code, b)
	}
	if !slicesContains(s.model.Got()[0].ToolNames(), "search_listings") || slicesContains(s.model.Got()[0].ToolNames(), "search_knowledge") {
		t.Fatalf("tools offered: %v", s.model.Got()[0].ToolNames())
	}
	if last := s.model.Last().Messages; !strings.Contains(last[len(last)-1].Text(), "Seaside villa with pool") {
		t.Fatalf("search_listings result: %+v", last[len(last)-1])
	}
}
