package widgetstore_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/widgetstore"
)

// The key is made once (concurrent first uses agree) and rotation
// replaces it.
func TestSecret(t *testing.T) {
	db, _, _ := storetest.WithChatAgent(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	got := make([]string, 8)
	var n atomic.Int32
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := db.Widget.Secret(ctx, func() string { return "key-" + string(rune('a'+n.Add(1))) })
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		}()
	}
	wg.Wait()
	for _, s := range got {
		if s != got[0] || s == "" {
			t.Fatalf("first uses disagree: %q", got)
		}
	}
	if err := db.Widget.RotateSecret(ctx, "rotated"); err != nil {
		t.Fatal(err)
	}
	if s, _ := db.Widget.Secret(ctx, func() string { return "unused" }); s != "rotated" {
		t.Fatalf("after rotation %q", s)
	}
}

// The daily cap holds under concurrent writers, per agent and day, and so
// does each address's share of it; a refusal counts nothing.
func TestCountMessage(t *testing.T) {
	db, orgID, agentID := storetest.WithChatAgent(t)
	ctx := context.Background()
	var ok, full atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := db.Widget.CountMessage(ctx, agentID, "192.0.2."+strconv.Itoa(i%10), "2026-11-25", 7, 5)
			if err != nil {
				t.Error(err)
			}
			switch r {
			case widgetstore.Counted:
				ok.Add(1)
			case widgetstore.AgentFull:
				full.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 7 || full.Load() != 13 {
		t.Fatalf("%d messages counted, %d refused under a cap of 7", ok.Load(), full.Load())
	}
	if r, _ := db.Widget.CountMessage(ctx, agentID, "192.0.2.1", "2026-11-26", 7, 5); r != widgetstore.Counted {
		t.Fatal("the next day is full")
	}
	// One address: its share (2) of a day of 10, in parallel; the address
	// refused counts nothing against the agent, so another address gets
	// the rest of the day.
	ok.Store(0)
	var refused atomic.Int32
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := db.Widget.CountMessage(ctx, agentID, "198.51.100.7", "2026-11-27", 10, 2)
			if err != nil {
				t.Error(err)
			}
			switch r {
			case widgetstore.Counted:
				ok.Add(1)
			case widgetstore.AddressFull:
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 2 || refused.Load() != 8 {
		t.Fatalf("one address: %d counted, %d refused under a share of 2", ok.Load(), refused.Load())
	}
	for i := range 8 {
		if r, _ := db.Widget.CountMessage(ctx, agentID, "203.0.113."+strconv.Itoa(i), "2026-11-27", 10, 2); r != widgetstore.Counted {
			t.Fatalf("address %d after the first's share: %v", i, r)
		}
	}
	if r, _ := db.Widget.CountMessage(ctx, agentID, "203.0.113.99", "2026-11-27", 10, 2); r != widgetstore.AgentFull {
		t.Fatalf("over the cap: %v", r)
	}
	// Pruning keeps the given day's counts and drops the older ones.
	if err := db.Widget.PruneAddresses(ctx, "2026-11-27"); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.Widget.CountMessage(ctx, agentID, "198.51.100.7", "2026-11-27", 100, 2); r != widgetstore.AddressFull {
		t.Fatalf("the day's share was pruned: %v", r)
	}
	if r, _ := db.Widget.CountMessage(ctx, agentID, "192.0.2.1", "2026-11-26", 100, 1); r != widgetstore.Counted {
		t.Fatalf("an old day's share was kept: %v", r)
	}
	// Only widget conversations are found for the preflight.
	w, _, err := db.Conversations.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: agentID, Channel: "widget"})
	if err != nil {
		t.Fatal(err)
	}
	api, _, _ := db.Conversations.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: agentID, Channel: "api"})
	if o, a, err := db.Widget.ConversationAgent(ctx, w.ID); err != nil || o != orgID || a != agentID {
		t.Fatalf("widget conversation: %s %s %v", o, a, err)
	}
	if _, _, err := db.Widget.ConversationAgent(ctx, api.ID); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("api conversation: %v", err)
	}
}
