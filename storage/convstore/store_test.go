package convstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Turns are numbered in order even when sent at once; an ended
// conversation takes no more; another organization sees nothing.
func TestTurnsAndEnd(t *testing.T) {
	ctx := context.Background()
	db, org, agent := storetest.WithChatAgent(t)
	s := db.Conversations
	c, created, err := s.Create(ctx, convstore.Conversation{OrgID: org, AgentID: agent, Channel: "api"})
	if err != nil || !created {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			_, err := s.AppendTurn(ctx, org, c.ID, []convstore.Message{{Role: "user", Content: "q"},
				{Role: "assistant", Content: "a", Usage: json.RawMessage(`{"totalTokens":3}`)}})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ms, err := s.Messages(ctx, c.ID)
	if err != nil || len(ms) != 16 {
		t.Fatalf("%d messages, %v", len(ms), err)
	}
	for i, m := range ms {
		if m.Seq != i || (i%2 == 0) != (m.Role == "user") {
			t.Fatalf("message %d: seq %d role %s", i, m.Seq, m.Role)
		}
	}
	if _, err := s.Get(ctx, "other-org", c.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another org: %v", err)
	}
	if _, err := s.AppendTurn(ctx, "other-org", c.ID, []convstore.Message{{Role: "user", Content: "x"}}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("append as another org: %v", err)
	}
	ended, err := s.End(ctx, org, c.ID)
	if err != nil || ended.Status != "ended" || ended.EndedAt == nil {
		t.Fatalf("end: %+v %v", ended, err)
	}
	if _, err := s.End(ctx, org, c.ID); err != nil {
		t.Fatalf("second end: %v", err)
	}
	if _, err := s.AppendTurn(ctx, org, c.ID, []convstore.Message{{Role: "user", Content: "x"}}); !errors.Is(err, convstore.ErrEnded) {
		t.Fatalf("append after end: %v", err)
	}
	evs, err := db.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: org, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if len(types) != 2 || types[0] != convstore.EventStarted || types[1] != convstore.EventEnded {
		t.Fatalf("events %v", types)
	}
	// The end records the conversation with its transcript, byte for byte.
	snap, err := convstore.DecodeSnapshot(evs[1].Data, evs[1].Version)
	if err != nil || snap.Conversation.Status != "ended" || len(snap.Messages) != 16 ||
		string(snap.Messages[1].Usage) != `{"totalTokens":3}` || snap.Messages[0].Usage != nil {
		t.Fatalf("ended snapshot %+v %v", snap, err)
	}
	got, total, err := s.List(ctx, org, convstore.Filter{Status: "ended", Limit: 10})
	if err != nil || total != 1 || got[0].MessageCount != 16 {
		t.Fatalf("list %+v %d %v", got, total, err)
	}
}

// A call has one conversation, however many turns start at once.
func TestCallConversationIsOne(t *testing.T) {
	ctx := context.Background()
	db, org, agent := storetest.WithChatAgent(t)
	ids := make(chan string, 6)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Go(func() {
			c, _, err := db.Conversations.Create(ctx, convstore.Conversation{OrgID: org, AgentID: agent, Channel: "voice", CallID: "call-1"})
			if err != nil {
				t.Error(err)
			}
			ids <- c.ID
		})
	}
	wg.Wait()
	close(ids)
	first := <-ids
	for id := range ids {
		if id != first {
			t.Fatalf("two conversations for one call: %s %s", first, id)
		}
	}
}

// The tools secret is made only by a rotation; a rotation keeps the
// previous one for the overlap, then it is gone.
func TestToolsSecret(t *testing.T) {
	ctx := context.Background()
	db, org, _ := storetest.WithChatAgent(t)
	s := db.Conversations
	now := time.Now()
	if _, err := s.ToolsSecret(ctx, org, now); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("before any: %v", err)
	}
	if until, err := s.RotateToolsSecret(ctx, org, "whsec_AAAA", now, time.Hour); err != nil || until != nil {
		t.Fatal(until, err)
	}
	if got, err := s.ToolsSecret(ctx, org, now); err != nil || got.Secret != "whsec_AAAA" || got.Previous != "" {
		t.Fatalf("%+v %v", got, err)
	}
	until, err := s.RotateToolsSecret(ctx, org, "whsec_CCCC", now, time.Hour)
	if err != nil || until == nil || until.Sub(now) < time.Hour-time.Second {
		t.Fatal(until, err)
	}
	if got, _ := s.ToolsSecret(ctx, org, now.Add(time.Minute)); got.Secret != "whsec_CCCC" || got.Previous != "whsec_AAAA" {
		t.Fatalf("in the overlap %+v", got)
	}
	if got, _ := s.ToolsSecret(ctx, org, now.Add(2*time.Hour)); got.Secret != "whsec_CCCC" || got.Previous != "" {
		t.Fatalf("after the overlap %+v", got)
	}
}
