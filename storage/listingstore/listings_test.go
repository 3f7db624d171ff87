package listingstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

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
