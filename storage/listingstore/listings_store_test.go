package listingstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/listingstore"
)

// listing is a write of one new listing in category cat.
func listing(ext, cat string, cents int64, terms ...listingstore.AttrTerm) listingstore.ListingWrite {
	return listingstore.ListingWrite{Listing: listingstore.Listing{ExternalID: ext, Title: "T " + ext, Category: cat, HasPrice: cents >= 0,
		PriceCents: max(cents, 0), Currency: "EUR", Attributes: []byte(`{"k":"v"}`)}, Hash: []byte("h-" + ext), Terms: terms}
}

// Create, read back, update in place (same ids), per organization.
func TestListingsStoreAndUpdate(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	acme, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	out, err := db.Listings.SyncListings(ctx, acme.ID, []listingstore.ListingWrite{listing("a", "sofa", 12345), listing("b", "", -1)}, nil, nil)
	if err != nil || len(out.Results) != 2 || out.Results[0].Err != nil || out.Results[0].Seq == 0 || out.Results[0].ID == "" {
		t.Fatalf("create: %+v %v", out, err)
	}
	a, err := db.Listings.GetListing(ctx, acme.ID, "a")
	if err != nil || a.Seq != out.Results[0].Seq || a.ID != out.Results[0].ID || a.Category != "sofa" || !a.HasPrice ||
		a.PriceCents != 12345 || string(a.Attributes) != `{"k":"v"}` || a.OrgID != acme.ID {
		t.Fatalf("read a: %+v %v", a, err)
	}
	if b, err := db.Listings.GetListing(ctx, acme.ID, "b"); err != nil || b.HasPrice || b.Category != "" {
		t.Fatalf("read b (no price, no category): %+v %v", b, err)
	}
	if _, err := db.Listings.GetListing(ctx, other.ID, "a"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another organization's listing: %v", err)
	}
	// The same external id is free in another organization.
	if out, err := db.Listings.SyncListings(ctx, other.ID, []listingstore.ListingWrite{listing("a", "sofa", 1)}, nil, nil); err != nil || out.Results[0].Err != nil {
		t.Fatalf("other organization's a: %+v %v", out, err)
	}

	st, err := db.Listings.ListingStates(ctx, acme.ID, []string{"a", "b", "zz"})
	if err != nil || len(st) != 2 || st["a"].Seq != a.Seq || string(st["a"].Hash) != "h-a" {
		t.Fatalf("states: %+v %v", st, err)
	}
	// An update names the stored row; it keeps both ids.
	w := listing("a", "chair", 999)
	w.Seq, w.ID, w.Hash = a.Seq, a.ID, []byte("h-a2")
	if out, err := db.Listings.SyncListings(ctx, acme.ID, []listingstore.ListingWrite{w}, nil, nil); err != nil || out.Results[0].Err != nil || out.Results[0].Seq != a.Seq {
		t.Fatalf("update: %+v %v", out, err)
	}
	if a2, _ := db.Listings.GetListing(ctx, acme.ID, "a"); a2.ID != a.ID || a2.Category != "chair" || a2.PriceCents != 999 || !a2.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("updated: %+v", a2)
	}
	if st, _ := db.Listings.ListingStates(ctx, acme.ID, []string{"a"}); string(st["a"].Hash) != "h-a2" {
		t.Fatalf("hash after update: %q", st["a"].Hash)
	}
	// An update of a row of another organization is refused alone.
	w.Listing.Title = "stolen"
	out, err = db.Listings.SyncListings(ctx, other.ID, []listingstore.ListingWrite{w, listing("c", "", 5)}, nil, nil)
	if err != nil || !errors.Is(out.Results[0].Err, storage.ErrNotFound) || out.Results[1].Err != nil {
		t.Fatalf("cross-organization update: %+v %v", out.Results, err)
	}
	if a3, _ := db.Listings.GetListing(ctx, acme.ID, "a"); a3.Title == "stolen" {
		t.Fatal("another organization changed acme's listing")
	}
}

// A stale scope deletes the category's listings that were not kept, with
// their attribute rows, and nothing else.
func TestListingsStaleScopeAndReads(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	o, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	red := listingstore.AttrTerm{Key: "color", Value: "red"}
	out, err := db.Listings.SyncListings(ctx, o.ID, []listingstore.ListingWrite{listing("a", "sofa", 1, red), listing("b", "sofa", 2, red),
		listing("c", "chair", 3, red)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seq := map[string]int64{"a": out.Results[0].Seq, "b": out.Results[1].Seq, "c": out.Results[2].Seq}
	sofa := "sofa"
	ls, total, err := db.Listings.ActiveListings(ctx, o.ID, &sofa, 1)
	if err != nil || total != 2 || len(ls) != 1 || ls[0].ExternalID != "a" {
		t.Fatalf("sofas, limit 1: %+v %d %v", ls, total, err)
	}
	if _, total, _ := db.Listings.ActiveListings(ctx, o.ID, nil, 10); total != 3 {
		t.Fatalf("all: %d", total)
	}
	// Order as asked, unknown and foreign ids skipped.
	got, err := db.Listings.ListingsBySeq(ctx, o.ID, []int64{seq["c"], 999999, seq["a"]})
	if err != nil || len(got) != 2 || got[0].ExternalID != "c" || got[1].ExternalID != "a" {
		t.Fatalf("by seq: %+v %v", got, err)
	}
	if got, _ := db.Listings.ListingsBySeq(ctx, "other-org", []int64{seq["a"]}); len(got) != 0 {
		t.Fatalf("by seq through another organization: %+v", got)
	}

	out, err = db.Listings.SyncListings(ctx, o.ID, nil, &listingstore.StaleScope{Category: "sofa", Keep: []string{"b"}}, nil)
	if err != nil || len(out.Deleted) != 1 || out.Deleted[0] != seq["a"] {
		t.Fatalf("stale sofas: %+v %v", out, err)
	}
	if _, err := db.Listings.GetListing(ctx, o.ID, "a"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("stale listing still there: %v", err)
	}
	reds, err := db.Listings.FilterListingSeqs(ctx, listingstore.ListingFilter{OrgID: o.ID, Attrs: []listingstore.AttrFilter{{Key: "color", Values: []string{"red"}}}})
	if err != nil || len(reds) != 2 {
		t.Fatalf("red listings after the delete: %v %v", reds, err)
	}
	for _, s := range reds {
		if s == seq["a"] {
			t.Fatal("the deleted listing's attribute row is left")
		}
	}
	// An empty keep list empties the category.
	if out, err := db.Listings.SyncListings(ctx, o.ID, nil, &listingstore.StaleScope{Category: "chair"}, nil); err != nil || len(out.Deleted) != 1 {
		t.Fatalf("empty chairs: %+v %v", out, err)
	}
	if _, total, _ := db.Listings.ActiveListings(ctx, o.ID, nil, 10); total != 1 {
		t.Fatalf("left: %d, want b only", total)
	}
}
