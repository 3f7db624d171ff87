package storage

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func listingOrg(t *testing.T) (*DB, string) {
	t.Helper()
	db := openTestDB(t, filepath.Join(t.TempDir(), "l.db"))
	o, err := db.CreateOrg(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return db, o.ID
}

func lw(ext string, terms ...AttrTerm) ListingWrite {
	return ListingWrite{Listing: Listing{ExternalID: ext, Title: "T " + ext, Currency: "EUR", Attributes: []byte(`{}`)},
		Hash: []byte(ext), Terms: terms}
}

// A write that fails is rolled back alone: the sync is redone with
// savepoints and the other listings stand.
func TestSyncListingsItemFailure(t *testing.T) {
	db, org := listingOrg(t)
	ctx := context.Background()
	if _, err := db.SyncListings(ctx, org, []ListingWrite{lw("a")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	// "a" planned as a create although it exists (a concurrent sync did it).
	out, err := db.SyncListings(ctx, org, []ListingWrite{lw("b", AttrTerm{"color", "red"}), lw("a", AttrTerm{"color", "red"}), lw("c")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Results[0].Err != nil || !errors.Is(out.Results[1].Err, ErrConflict) || out.Results[2].Err != nil {
		t.Fatalf("results %+v", out.Results)
	}
	ls, total, err := db.ActiveListings(ctx, org, nil, 10)
	if err != nil || total != 3 || len(ls) != 3 {
		t.Fatalf("listings %d %v", total, err)
	}
	// The failed write left no attribute row behind.
	seqs, err := db.FilterListingSeqs(ctx, ListingFilter{OrgID: org, Attrs: []AttrFilter{{Key: "color", Values: []string{"red"}}}})
	if err != nil || len(seqs) != 1 || seqs[0] != out.Results[0].Seq {
		t.Fatalf("red listings %v %v", seqs, err)
	}
}

func TestKeywordListingsPerOrg(t *testing.T) {
	db, org := listingOrg(t)
	ctx := context.Background()
	other, err := db.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	w := lw("a")
	w.Title = "Red velvet sofa"
	if _, err := db.SyncListings(ctx, org, []ListingWrite{w}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SyncListings(ctx, other.ID, []ListingWrite{w}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"velvet sofa": 1, "VELVET": 1, "velvet chair": 0, `"; DROP TABLE x; org:*`: 0, "": 0} {
		got, err := db.KeywordListings(ctx, org, q, nil, 10)
		if err != nil || len(got) != want {
			t.Errorf("%q: %v %v, want %d", q, got, err, want)
		}
	}
	// The organization's token never matches as a search word.
	if got, _ := db.KeywordListings(ctx, org, orgToken(org), nil, 10); len(got) != 0 {
		t.Fatalf("org token matched: %v", got)
	}
}
