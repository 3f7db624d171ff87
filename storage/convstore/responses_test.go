package convstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// A stored response is written with its turn, read by its organization
// only; on an ended conversation neither is written.
func TestResponses(t *testing.T) {
	ctx := context.Background()
	db, org, agent := storetest.WithChatAgent(t)
	s := db.Conversations
	c, _, err := s.Create(ctx, convstore.Conversation{OrgID: org, AgentID: agent, Channel: "api"})
	if err != nil {
		t.Fatal(err)
	}
	ctxJSON := json.RawMessage(`[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]`)
	if _, err := s.AppendResponseTurn(ctx, org, c.ID, []convstore.Message{{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}},
		convstore.Response{ID: "resp_1", AgentID: agent, Messages: ctxJSON}); err != nil {
		t.Fatal(err)
	}
	r, err := s.GetResponse(ctx, org, "resp_1")
	if err != nil || r.ConversationID != c.ID || r.AgentID != agent || string(r.Messages) != string(ctxJSON) {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := s.GetResponse(ctx, "another-org", "resp_1"); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("another organization reads it: %v", err)
	}
	if _, err := s.End(ctx, org, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendResponseTurn(ctx, org, c.ID, []convstore.Message{{Role: "user", Content: "q2"}},
		convstore.Response{ID: "resp_2", AgentID: agent, Messages: ctxJSON}); !errors.Is(err, convstore.ErrEnded) {
		t.Fatalf("ended conversation: %v", err)
	}
	if _, err := s.GetResponse(ctx, org, "resp_2"); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("a response stored without its turn: %v", err)
	}
}
