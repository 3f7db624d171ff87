package convstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/convstore"
)

// The dashboard's filters: channel and a creation time range.
func TestListByChannelAndTime(t *testing.T) {
	db, org, agent := storetest.WithChatAgent(t)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	for _, ch := range []string{"widget", "api", "widget"} {
		if _, _, err := db.Conversations.Create(ctx, convstore.Conversation{OrgID: org, AgentID: agent, Channel: ch}); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now().Add(time.Second)
	count := func(f convstore.Filter) int {
		t.Helper()
		f.Limit = 10
		_, n, err := db.Conversations.List(ctx, org, f)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(convstore.Filter{Channel: "widget"}); n != 2 {
		t.Fatalf("widget: %d", n)
	}
	if n := count(convstore.Filter{Channel: "voice"}); n != 0 {
		t.Fatalf("voice: %d", n)
	}
	if n := count(convstore.Filter{From: &before, To: &after}); n != 3 {
		t.Fatalf("in range: %d", n)
	}
	if n := count(convstore.Filter{From: &after}); n != 0 {
		t.Fatalf("after: %d", n)
	}
	if n := count(convstore.Filter{To: &before}); n != 0 {
		t.Fatalf("before: %d", n)
	}
}
