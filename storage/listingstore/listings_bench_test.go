package listingstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/listingstore"
)

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
