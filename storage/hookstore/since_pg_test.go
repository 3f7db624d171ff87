package hookstore_test

import (
	"context"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/hookstore"
)

// An event committed before its endpoint was created is never sent to it,
// even when an older transaction was still running at the time (so the
// event was ahead of the log's horizon, where the new cursor starts).
// CI met it with autovacuum's transaction as the older one.
func TestEndpointSkipsEventsCommittedBeforeIt(t *testing.T) {
	dbtest.SkipOnSQLite(t, "SQLite's cursor is the newest seq")
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	end := storetest.Hold(t, db, "SELECT pg_current_xact_id()") // an older transaction with an xid, running
	sync(t, db, org, "before")                                  // commits behind it
	ep, err := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://a.example/h",
		Events: []string{"*"}, Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	end()
	sync(t, db, org, "after")
	for range 2 {
		if _, err := db.Webhooks.FanOutEvents(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := db.Webhooks.ListDeliveries(ctx, hookstore.DeliveryFilter{OrgID: org, EndpointID: ep.ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("%d deliveries to the new endpoint, want 1 (the event logged after it): %+v", len(ds), ds)
	}
}
