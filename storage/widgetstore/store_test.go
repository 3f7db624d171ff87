package widgetstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/sqldb"
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

// The daily cap holds under concurrent writers, per agent and day; a
// message given back frees a place.
func TestCountMessage(t *testing.T) {
	db, orgID, agentID := storetest.WithChatAgent(t)
	ctx := context.Background()
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took, err := db.Widget.CountMessage(ctx, agentID, "2026-11-25", 7)
			if err != nil {
				t.Error(err)
			}
			if took {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 7 {
		t.Fatalf("%d messages counted under a cap of 7", ok.Load())
	}
	if took, _ := db.Widget.CountMessage(ctx, agentID, "2026-11-26", 7); !took {
		t.Fatal("the next day is full")
	}
	if err := db.Widget.Uncount(ctx, agentID, "2026-11-25"); err != nil {
		t.Fatal(err)
	}
	if took, _ := db.Widget.CountMessage(ctx, agentID, "2026-11-25", 7); !took {
		t.Fatal("a message given back did not free a place")
	}
	if took, _ := db.Widget.CountMessage(ctx, agentID, "2026-11-25", 7); took {
		t.Fatal("over the cap")
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
