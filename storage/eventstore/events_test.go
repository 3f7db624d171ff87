package eventstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/listingstore"
)

func eventTypes(t *testing.T, db *storage.Stores, org string) []string {
	t.Helper()
	evs, err := db.Events.ListEvents(context.Background(), eventstore.EventFilter{OrgID: org, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// The log is a transactional outbox: a change that rolls back logs
// nothing, and one that commits logs exactly its event.
func TestEventsFollowTheirTransaction(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	// A sync whose savepoint-free attempt fails is redone: one event only.
	db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{lw("a")}, nil, nil)
	if _, err := db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{lw("b"), lw("a")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := eventTypes(t, db, org); len(got) != 2 || got[0] != listingstore.EventListingsSynced || got[1] != listingstore.EventListingsSynced {
		t.Fatalf("after two syncs: %v", got)
	}
	// A cancel refused inside its transaction logs nothing.
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	calls, err := db.Calls.CreateCalls(ctx, []callstore.Call{{OrgID: org, AgentID: a.ID, Status: callstore.CallQueued, PhoneNumber: "+14155550100"}})
	if err != nil {
		t.Fatal(err)
	}
	id := calls[0].ID
	if _, _, err := db.Calls.CancelCall(ctx, org, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Calls.CancelCall(ctx, org, id, time.Now()); !errors.Is(err, callstore.ErrCallFinished) {
		t.Fatalf("second cancel: %v", err)
	}
	got := eventTypes(t, db, org)
	if want := []string{listingstore.EventListingsSynced, listingstore.EventListingsSynced, callstore.EventCallQueued, callstore.EventCallEnded}; len(got) != 4 ||
		got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("events %v, want %v", got, want)
	}
	// An event records the call as its transaction left it, in a
	// versioned snapshot the calls store reads back.
	all, _ := db.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: org, Limit: 3})
	evs, _ := db.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: org, After: all[1].Pos(), Limit: 1})
	snap, err := callstore.DecodeCallSnapshot(evs[0].Data, evs[0].Version)
	if err != nil {
		t.Fatalf("snapshot %s (version %d): %v", evs[0].Data, evs[0].Version, err)
	}
	if snap.Call.ID != id || snap.Call.Status != callstore.CallQueued || string(snap.Call.Metadata) != "{}" || snap.Call.Window != nil {
		t.Fatalf("snapshot %+v", snap.Call)
	}
}

// Deliveries of one subject to one endpoint are claimed one at a time, in
// order; a claim whose lease ran out is taken again; a finished claim
// cannot be finished twice.
func TestDeliveryClaims(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	ep, err := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.com", Events: []string{"*"}, Secret: "whsec_x"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // three events of one subject
		db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{}, nil, nil)
	}
	if n, err := db.Webhooks.FanOutEvents(ctx); err != nil || n != 3 {
		t.Fatalf("fan-out %d %v", n, err)
	}
	if n, _ := db.Webhooks.FanOutEvents(ctx); n != 0 {
		t.Fatalf("second fan-out made %d", n)
	}
	now := time.Now()
	claim := func(tok string, at time.Time) []hookstore.DeliveryJob {
		jobs, err := db.Webhooks.ClaimDeliveries(ctx, hookstore.DeliveryClaim{Token: tok, WorkerID: "w", Now: at, LeaseUntil: at.Add(time.Second),
			Limit: 10, PerEndpoint: 10})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	j1 := claim("t1", now)
	if len(j1) != 1 || j1[0].Attempt != 1 || j1[0].Event.Seq != 1 || j1[0].URL != ep.URL {
		t.Fatalf("first claim %+v", j1)
	}
	if j := claim("t2", now); len(j) != 0 {
		t.Fatalf("claimed %d behind a delivery in flight", len(j))
	}
	// The lease runs out: the same delivery is taken again, attempt 2.
	later := now.Add(2 * time.Second)
	j2 := claim("t3", later)
	if len(j2) != 1 || j2[0].ID != j1[0].ID || j2[0].Attempt != 2 {
		t.Fatalf("reclaim %+v", j2)
	}
	off := hookstore.EndpointFailure{After: time.Hour, Reason: func(string) string { return "off" }}
	// The first claim's result comes back late: ignored.
	db.Webhooks.FinishDeliveries(ctx, []hookstore.DeliveryResult{{ID: j1[0].ID, Token: "t1", Attempt: 1, OK: true, StartedAt: now}}, later, off)
	d, _ := db.Webhooks.GetDelivery(ctx, org, ep.ID, j1[0].ID)
	if d.Status != hookstore.DeliveryDelivering || len(d.History) != 0 {
		t.Fatalf("stale result applied: %+v", d)
	}
	db.Webhooks.FinishDeliveries(ctx, []hookstore.DeliveryResult{{ID: j2[0].ID, Token: "t3", Attempt: 2, OK: true, Code: 204, StartedAt: later}}, later, off)
	j3 := claim("t4", later)
	if len(j3) != 1 || j3[0].Event.Seq != 2 {
		t.Fatalf("next in order %+v", j3)
	}
}

// Pruning removes old events with their finished deliveries, keeps events
// a delivery still waits for, and cursors stay valid (seq never reused).
func TestPruneEvents(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	ep, _ := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.com", Events: []string{"*"}, Secret: "whsec_x"})
	for range 3 {
		db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{}, nil, nil)
	}
	db.Webhooks.FanOutEvents(ctx)
	now := time.Now()
	jobs, _ := db.Webhooks.ClaimDeliveries(ctx, hookstore.DeliveryClaim{Token: "t", WorkerID: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, PerEndpoint: 10})
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	db.Webhooks.FinishDeliveries(ctx, []hookstore.DeliveryResult{{ID: jobs[0].ID, Token: "t", Attempt: 1, OK: true, StartedAt: now}}, now,
		hookstore.EndpointFailure{})
	n, err := db.Events.PruneEvents(ctx, time.Now().Add(time.Hour), 100)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d %v; want only the delivered event", n, err)
	}
	if got := eventTypes(t, db, org); len(got) != 2 {
		t.Fatalf("left %v", got)
	}
	db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{}, nil, nil)
	evs, _ := db.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: org, Limit: 10})
	if last := evs[len(evs)-1].Seq; last != 4 {
		t.Fatalf("seq %d after pruning, want 4", last)
	}
	ds, _ := db.Webhooks.ListDeliveries(ctx, hookstore.DeliveryFilter{OrgID: org, EndpointID: ep.ID, Limit: 10})
	if len(ds) != 2 {
		t.Fatalf("deliveries left %d", len(ds))
	}
}

func lw(ext string) listingstore.ListingWrite {
	return listingstore.ListingWrite{Listing: listingstore.Listing{ExternalID: ext, Title: "T " + ext, Currency: "EUR", Attributes: []byte(`{}`)},
		Hash: []byte(ext)}
}
