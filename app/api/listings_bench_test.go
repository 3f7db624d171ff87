package api

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/listings"
)

var benchColors = []string{"red", "blue", "green", "black", "white", "grey", "brown", "beige", "yellow", "orange"}

var benchWords = []string{"sofa", "chair", "table", "lamp", "bed", "shelf", "desk", "rug", "mirror", "cabinet",
	"leather", "oak", "steel", "velvet", "linen", "modern", "vintage", "compact", "large", "outdoor"}

// benchListing is a realistic listing: a title and description from a small
// vocabulary, ten categories, a price and four attributes.
func benchListing(prefix string, i int) map[string]any {
	w := func(k int) string { return benchWords[(i*7+k*13)%len(benchWords)] }
	return map[string]any{
		"externalId":  fmt.Sprintf("%s-%06d", prefix, i),
		"title":       fmt.Sprintf("%s %s %s %d", w(0), w(1), w(2), i),
		"description": fmt.Sprintf("A %s %s made of %s, in very good condition. Ships in %d days.", w(3), w(4), w(5), 1+i%9),
		"category":    fmt.Sprintf("cat%d", i%10),
		"price":       json.Number(fmt.Sprintf("%d.%02d", 10+i%2000, i%100)),
		"attributes": map[string]any{"color": benchColors[(i/10)%len(benchColors)], "rooms": 1 + i%6,
			"tags": []any{w(6), w(7)}, "outdoor": i%4 == 0},
	}
}

// BenchmarkListingsSync1000 is one POST /api/v1/listings/sync of 1,000 new
// listings through the real server, embedded with the built-in embedder.
func BenchmarkListingsSync1000(b *testing.B) {
	e := newTestEnv(b)
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		items := make([]map[string]any, 1000)
		for i := range items {
			items[i] = benchListing(fmt.Sprintf("s%d", n), i)
		}
		body, _ := json.Marshal(map[string]any{"listings": items})
		b.StartTimer()
		if code, _, resp := e.do("POST", "/api/v1/listings/sync", e.key, body); code != 200 {
			b.Fatalf("sync: %d %s", code, resp)
		}
	}
}

// BenchmarkListingsSearch50000 searches 50,000 listings of one organization
// with filters (category, attribute, price range), with and without text.
func BenchmarkListingsSearch50000(b *testing.B) {
	e := newTestEnv(b)
	ctx := context.Background()
	var plan listings.ImportPlan
	g := listings.ImportGroup{}
	for i := 0; i < 50000; i++ {
		raw, _ := json.Marshal(benchListing("x", i))
		in, errs := listings.Parse(raw)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		g.Items = append(g.Items, in)
	}
	plan.Groups = []listings.ImportGroup{g}
	if _, err := e.app.srv.listings.Import(ctx, e.orgID, plan, false, nil); err != nil {
		b.Fatal(err)
	}
	key := e.keyWithRole(e.orgID, "member", access.KeyOptions{RateLimit: 100000}) // past the default 1000/min
	for name, q := range map[string]string{
		"filtered":      "category=cat3&attr.color=green&minPrice=100&maxPrice=1500",
		"filtered_text": "q=leather+sofa&category=cat3&attr.color=green&minPrice=100&maxPrice=1500",
		"attr_text":     "q=vintage+oak+table&attr.outdoor=true&limit=20",
		"text":          "q=velvet+chair",
	} {
		b.Run(name, func(b *testing.B) {
			var sr searchResp
			if code := e.doJSON("GET", "/api/v1/listings/search?"+q, key, nil, &sr); code != 200 || len(sr.Data.Results) == 0 {
				b.Fatalf("%s: %d %d results", q, code, len(sr.Data.Results))
			}
			for b.Loop() {
				if code, _, _ := e.do("GET", "/api/v1/listings/search?"+q, key, nil); code != 200 {
					b.Fatal(code)
				}
			}
		})
	}
}
