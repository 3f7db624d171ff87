package listingstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/listingstore"
	"github.com/agentd/agentd/storage/sqldb"
)

func lw(ext string, terms ...listingstore.AttrTerm) listingstore.ListingWrite {
	return listingstore.ListingWrite{Listing: listingstore.Listing{ExternalID: ext, Title: "T " + ext, Currency: "EUR", Attributes: []byte(`{}`)},
		Hash: []byte(ext), Terms: terms}
}

// A write that fails is rolled back alone: the sync is redone with
// savepoints and the other listings stand.
func TestSyncListingsItemFailure(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	if _, err := db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{lw("a")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	// "a" planned as a create although it exists (a concurrent sync did it).
	out, err := db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{lw("b", listingstore.AttrTerm{"color", "red"}), lw("a", listingstore.AttrTerm{"color", "red"}), lw("c")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Results[0].Err != nil || !errors.Is(out.Results[1].Err, storage.ErrConflict) || out.Results[2].Err != nil {
		t.Fatalf("results %+v", out.Results)
	}
	ls, total, err := db.Listings.ActiveListings(ctx, org, nil, 10)
	if err != nil || total != 3 || len(ls) != 3 {
		t.Fatalf("listings %d %v", total, err)
	}
	// The failed write left no attribute row behind.
	seqs, err := db.Listings.FilterListingSeqs(ctx, listingstore.ListingFilter{OrgID: org, Attrs: []listingstore.AttrFilter{{Key: "color", Values: []string{"red"}}}})
	if err != nil || len(seqs) != 1 || seqs[0] != out.Results[0].Seq {
		t.Fatalf("red listings %v %v", seqs, err)
	}
}

func TestKeywordListingsPerOrg(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	w := lw("a")
	w.Title = "Red velvet sofa"
	if _, err := db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{w}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Listings.SyncListings(ctx, other.ID, []listingstore.ListingWrite{w}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"velvet sofa": 1, "VELVET": 1, "velvet chair": 0, `"; DROP TABLE x; org:*`: 0, "": 0} {
		got, err := db.Listings.KeywordListings(ctx, org, q, nil, 10)
		if err != nil || len(got) != want {
			t.Errorf("%q: %v %v, want %d", q, got, err, want)
		}
	}
	// The organization id is no search word.
	if got, _ := db.Listings.KeywordListings(ctx, org, org, nil, 10); len(got) != 0 {
		t.Fatalf("org id matched: %v", got)
	}
}

// The listings' keyword index follows writes of this and another process:
// updates, stale deletions; it searches attributes and keeps the allow set.
func TestKeywordListingsFollowWrites(t *testing.T) {
	db, org := storetest.WithOrg(t)
	other := storetest.Open(t, db.Path())
	ctx := context.Background()
	w := lw("a")
	w.Title, w.Description, w.Attributes = "Oak table", "solid wood", []byte(`{"Finish":"matte","tags":["dining","extendable"],"seats":6,"new":true}`)
	out, err := db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{w, lw("b")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := out.Results[0].Seq
	for q, want := range map[string]int{"oak tables": 1, "extendable dining": 1, "finish matte": 1, "6 seats": 1, "true": 1, "wood": 1, "oak sofa": 0} {
		if got, err := db.Listings.KeywordListings(ctx, org, q, nil, 10); err != nil || len(got) != want {
			t.Errorf("%q: %v %v, want %d", q, got, err, want)
		}
	}
	if got, _ := db.Listings.KeywordListings(ctx, org, "oak", map[int64]bool{a + 100: true}, 10); len(got) != 0 {
		t.Fatalf("allow set ignored: %v", got)
	}
	w.Seq, w.Title = a, "Pine table"
	if _, err := other.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{w}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Listings.KeywordListings(ctx, org, "oak", nil, 10); len(got) != 0 {
		t.Fatalf("old title still found: %v", got)
	}
	if got, _ := db.Listings.KeywordListings(ctx, org, "pine", nil, 10); len(got) != 1 || got[0] != a {
		t.Fatalf("new title not found: %v", got)
	}
	if _, err := other.Listings.SyncListings(ctx, org, nil, &listingstore.StaleScope{Keep: []string{"b"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Listings.KeywordListings(ctx, org, "pine", nil, 10); len(got) != 0 {
		t.Fatalf("deleted listing found: %v", got)
	}
}

// A title word outranks the same word in a description.
func TestKeywordListingsTitleFirst(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	d, ti := lw("d"), lw("t")
	d.Title, d.Description = "Armchair", "goes with a sofa"
	ti.Title, ti.Description = "Sofa", "three seats, grey fabric"
	out, err := db.Listings.SyncListings(ctx, org, []listingstore.ListingWrite{d, ti}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Listings.KeywordListings(ctx, org, "sofa", nil, 10)
	if err != nil || len(got) != 2 || got[0] != out.Results[1].Seq {
		t.Fatalf("sofa: %v %v", got, err)
	}
}

// A sync larger than one multi-row statement, creates and updates mixed:
// every listing gets its own row id back, and an update replaces its
// attribute terms.
func TestSyncListingsBatched(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	const n = 2*sqldb.RowsPerStatement + 7
	var ws []listingstore.ListingWrite
	for i := range n {
		ws = append(ws, lw(fmt.Sprintf("x%04d", i), listingstore.AttrTerm{"color", "red"}, listingstore.AttrTerm{"n", fmt.Sprint(i)}))
	}
	out, err := db.Listings.SyncListings(ctx, org, ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i, r := range out.Results {
		l, err := db.Listings.GetListing(ctx, org, ws[i].ExternalID)
		if r.Err != nil || err != nil || l.Seq != r.Seq || l.ID != r.ID || seen[r.Seq] {
			t.Fatalf("result %d %+v: stored %+v %v", i, r, l, err)
		}
		seen[r.Seq] = true
	}
	// Recolour every third listing and add a few new ones in one sync.
	var again []listingstore.ListingWrite
	for i := 0; i < n; i += 3 {
		w := lw(ws[i].ExternalID, listingstore.AttrTerm{"color", "blue"})
		w.Seq, w.ID = out.Results[i].Seq, out.Results[i].ID
		again = append(again, w)
	}
	again = append(again, lw("new1", listingstore.AttrTerm{"color", "blue"}), lw("new2"))
	out2, err := db.Listings.SyncListings(ctx, org, again, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out2.Results {
		if r.Err != nil || (again[i].Seq != 0 && r.Seq != again[i].Seq) || r.Seq == 0 {
			t.Fatalf("second sync, result %d: %+v", i, r)
		}
	}
	count := func(key, value string) int {
		seqs, err := db.Listings.FilterListingSeqs(ctx, listingstore.ListingFilter{OrgID: org, Attrs: []listingstore.AttrFilter{{Key: key, Values: []string{value}}}})
		if err != nil {
			t.Fatal(err)
		}
		return len(seqs)
	}
	blue := (n+2)/3 + 1
	if r, b, k := count("color", "red"), count("color", "blue"), count("n", "0"); r != n-(n+2)/3 || b != blue || k != 0 {
		t.Fatalf("red %d blue %d n=0 %d, want %d %d 0", r, b, k, n-(n+2)/3, blue)
	}
}

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

// BenchmarkFilterListingSeqs measures the filter query alone over 50,000
// listings: a quarter match outdoor=true, a tenth match a category.
func BenchmarkFilterListingSeqs(b *testing.B) {
	db := storetest.Open(b, dbtest.Path(b, "l.db"))
	ctx := context.Background()
	o, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	for start := 0; start < 50000; start += 1000 {
		ws := make([]listingstore.ListingWrite, 1000)
		for i := range ws {
			n := start + i
			ws[i] = listingstore.ListingWrite{Listing: listingstore.Listing{ExternalID: fmt.Sprint(n), Title: "t", Currency: "EUR",
				Category: fmt.Sprintf("cat%d", n%10), HasPrice: true, PriceCents: int64(n % 200000), Attributes: []byte("{}")},
				Hash: []byte("h"), Terms: []listingstore.AttrTerm{{"outdoor", fmt.Sprint(n%4 == 0)}, {"color", fmt.Sprint(n % 10)}}}
		}
		if _, err := db.Listings.SyncListings(ctx, o.ID, ws, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	cat := "cat3"
	lo, hi := int64(10000), int64(150000)
	for name, f := range map[string]listingstore.ListingFilter{
		"attr_quarter": {OrgID: o.ID, Attrs: []listingstore.AttrFilter{{Key: "outdoor", Values: []string{"true"}}}},
		"cat_attr_price": {OrgID: o.ID, Category: &cat, MinCents: &lo, MaxCents: &hi,
			Attrs: []listingstore.AttrFilter{{Key: "color", Values: []string{"2"}}}},
		"category": {OrgID: o.ID, Category: &cat},
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := db.Listings.FilterListingSeqs(ctx, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
