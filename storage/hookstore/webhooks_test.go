package hookstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/listingstore"
)

// sync writes one listing, whose sync logs a listings.sync.completed event.
func sync(t *testing.T, db *storage.Stores, org, ext string) {
	t.Helper()
	w := listingstore.ListingWrite{Listing: listingstore.Listing{ExternalID: ext, Title: ext, Currency: "EUR",
		Attributes: []byte(`{}`)}, Hash: []byte(ext)}
	if _, err := db.Listings.SyncListings(context.Background(), org, []listingstore.ListingWrite{w}, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// An endpoint belongs to its organization, receives only the events of its
// organization and types logged after it was made, once each, and a
// claimed delivery that succeeds is done.
func TestWebhookFanOutAndDelivery(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	sync(t, db, org, "before") // logged before the endpoint: never sent
	all, err := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://a.example/h",
		Events: []string{"*"}, Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	calls, err := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://b.example/h",
		Events: []string{"call.ended"}, Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Webhooks.GetWebhook(ctx, other.ID, all.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another organization's endpoint: %v, want not found", err)
	}
	sync(t, db, org, "a")
	sync(t, db, other.ID, "b")
	for i, want := range []int{1, 0} { // the second fan-out finds nothing new
		n, err := db.Webhooks.FanOutEvents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("fan-out %d: %d deliveries, want %d", i, n, want)
		}
	}
	for _, ep := range []struct {
		id   string
		want int
	}{{all.ID, 1}, {calls.ID, 0}} {
		ds, err := db.Webhooks.ListDeliveries(ctx, hookstore.DeliveryFilter{OrgID: org, EndpointID: ep.id, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != ep.want {
			t.Fatalf("endpoint %s: %d deliveries, want %d", ep.id, len(ds), ep.want)
		}
		if ep.want == 1 && (ds[0].EventType != listingstore.EventListingsSynced || ds[0].Status != hookstore.DeliveryPending) {
			t.Fatalf("delivery %+v", ds[0])
		}
	}
	now := time.Now()
	jobs, err := db.Webhooks.ClaimDeliveries(ctx, hookstore.DeliveryClaim{Token: "t1", WorkerID: "w", Now: now,
		LeaseUntil: now.Add(time.Minute), Limit: 10, PerEndpoint: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].EndpointID != all.ID || jobs[0].Event.OrgID != org {
		t.Fatalf("claimed %+v", jobs)
	}
	if _, err := db.Webhooks.FinishDeliveries(ctx, []hookstore.DeliveryResult{{ID: jobs[0].ID, Token: jobs[0].Token,
		Attempt: jobs[0].Attempt, OK: true, Code: 200, StartedAt: now}}, now, hookstore.EndpointFailure{After: time.Hour}); err != nil {
		t.Fatal(err)
	}
	d, err := db.Webhooks.GetDelivery(ctx, org, all.ID, jobs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != hookstore.DeliverySucceeded || d.Attempts != 1 {
		t.Fatalf("after success: %s, %d attempts", d.Status, d.Attempts)
	}
}

// A ping goes to its one endpoint only; a disabled endpoint refuses it.
func TestWebhookPing(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	ep, err := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://a.example/h",
		Events: []string{"*"}, Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := db.Webhooks.PingWebhook(ctx, org, ep.ID, map[string]string{"hello": "world"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != hookstore.EventPing {
		t.Fatalf("ping event type %q", ev.Type)
	}
	if n, err := db.Webhooks.FanOutEvents(ctx); err != nil || n != 0 {
		t.Fatalf("a targeted ping fanned out: %d, %v", n, err)
	}
	off := false
	if _, err := db.Webhooks.UpdateWebhook(ctx, org, ep.ID, hookstore.WebhookPatch{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Webhooks.PingWebhook(ctx, org, ep.ID, nil); !errors.Is(err, hookstore.ErrWebhookDisabled) {
		t.Fatalf("ping of a disabled endpoint: %v", err)
	}
}
