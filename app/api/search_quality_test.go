package api

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// A word no source holds finds nothing in any mode, and neither does it
// with a stopword beside it (a hit on "the" alone is no match), nor under
// a filter; a real word still finds its source.
func TestKBNonsenseFindsNothing(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 1024)))
	col := e.createCollection(e.key, "n")
	e.doJSON("POST", "/api/v1/kb/sources/batch", e.key, map[string]any{"collectionId": col, "sources": []any{
		map[string]any{"externalId": "fr", "title": "Refunds", "content": "Refunds are paid within 14 days of the request."},
		map[string]any{"externalId": "ship", "title": "Shipping", "content": "Parcels ship in two days to the whole country."},
		map[string]any{"externalId": "pay", "title": "Payment", "content": "We take cards and bank transfers.", "contentRole": "internal"},
	}}, nil)
	e.waitProcessed(e.key, col)
	for _, q := range []string{"zqxwvtplk", "the zqxwvtplk of", "xkcdqwfp mbrtlz"} {
		for _, mode := range []string{"keyword", "semantic", "hybrid"} {
			for _, body := range []map[string]any{
				{"collectionId": col, "query": q, "mode": mode, "limit": 50},
				{"collectionId": col, "query": q, "mode": mode, "contentRole": "knowledge"},
			} {
				if res := e.search(e.key, body); len(res.Results) != 0 {
					t.Errorf("%v: %d results, first %+v", body, len(res.Results), res.Results[0])
				}
			}
		}
	}
	if res := e.search(e.key, map[string]any{"collectionId": col, "query": "when are refunds paid"}); len(res.Results) != 1 || res.Results[0].ExternalID != "fr" {
		t.Fatalf("a real query: %+v", res.Results)
	}
}

// searchAlpha is a collection setting (create, read, update, reset) and
// alpha a request field; both are checked, and alpha 0 ranks as keyword.
func TestKBSearchAlpha(t *testing.T) {
	e := newTestEnv(t, kbOpts(newTestEmbedder(t, 256)))
	type collResp struct {
		Data struct {
			ID          string   `json:"id"`
			Name        string   `json:"name"`
			SearchAlpha *float64 `json:"searchAlpha"`
		} `json:"data"`
	}
	var c collResp
	if code := e.doJSON("POST", "/api/v1/kb/collections", e.key, map[string]any{"name": "a", "searchAlpha": 0.4}, &c); code != 201 || c.Data.SearchAlpha == nil || *c.Data.SearchAlpha != 0.4 {
		t.Fatalf("create: %d %+v", code, c.Data)
	}
	col := c.Data.ID
	e.createCollection(e.key, "taken")
	patches := []struct {
		body   string
		status int
		alpha  *float64 // after the patch
		msg    string
	}{
		{`{"searchAlpha": 0.9}`, 200, ptr(0.9), ""},
		{`{"description": "kept alpha"}`, 200, ptr(0.9), ""},
		{`{"searchAlpha": null}`, 200, nil, ""},
		{`{"searchAlpha": 1.5}`, 400, nil, "searchAlpha must be a number from 0 to 1"},
		{`{"searchAlpha": "high"}`, 400, nil, "searchAlpha"},
		{`{"name": " "}`, 400, nil, "name is required"},
		{`{"name": "taken"}`, 409, nil, `already exists`},
	}
	for _, p := range patches {
		code, _, body := e.do("PATCH", "/api/v1/kb/collections/"+col, e.key, []byte(p.body))
		if code != p.status || !strings.Contains(string(body), p.msg) {
			t.Fatalf("PATCH %s: %d %s", p.body, code, body)
		}
		var got collResp
		e.doJSON("GET", "/api/v1/kb/collections/"+col, e.key, nil, &got)
		if (got.Data.SearchAlpha == nil) != (p.alpha == nil) || (p.alpha != nil && *got.Data.SearchAlpha != *p.alpha) || got.Data.Name != "a" {
			t.Fatalf("after PATCH %s: %+v", p.body, got.Data)
		}
	}
	if code, _, _ := e.do("PATCH", "/api/v1/kb/collections/00000000-0000-0000-0000-000000000000", e.key, []byte(`{"searchAlpha": 0.5}`)); code != 404 {
		t.Fatalf("PATCH missing collection: %d", code)
	}

	e.doJSON("POST", "/api/v1/kb/sources/batch", e.key, map[string]any{"collectionId": col, "sources": []any{
		map[string]any{"externalId": "a", "title": "Wing flutter", "content": "Flutter of a swept wing at high speed, flutter and flutter again."},
		map[string]any{"externalId": "b", "title": "Wings", "content": "A wing in a slipstream: wing loads and wing flutter."},
	}}, nil)
	e.waitProcessed(e.key, col)
	kw := e.search(e.key, map[string]any{"collectionId": col, "query": "wing flutter", "mode": "keyword"})
	h0 := e.search(e.key, map[string]any{"collectionId": col, "query": "wing flutter", "alpha": 0})
	h1 := e.search(e.key, map[string]any{"collectionId": col, "query": "wing flutter", "alpha": 1})
	if len(kw.Results) != 2 || len(h0.Results) != 2 || h0.Results[0].ExternalID != kw.Results[0].ExternalID || h0.Results[0].Score != 1 || h1.Results[0].Score != 1 {
		t.Fatalf("alpha 0 %+v, alpha 1 %+v, keyword %+v", h0.Results, h1.Results, kw.Results)
	}
	for _, a := range []any{-0.1, 1.01, "x"} {
		code, _, body := e.do("POST", "/api/v1/kb/search", e.key, mustJSON(map[string]any{"collectionId": col, "query": "wing", "alpha": a}))
		if code != 400 || !strings.Contains(string(body), "alpha") {
			t.Fatalf("alpha %v: %d %s", a, code, body)
		}
	}
}

func ptr(f float64) *float64 { return &f }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A made-up word finds no listing, with or without a filter, and a
// filtered text search returns only listings that match the filter and
// hold a word of the query.
func TestListingsSearchNonsenseAndFilters(t *testing.T) {
	e := newTestEnv(t)
	e.sync(e.key, false,
		listing("s1", "Red leather sofa", "category", "furniture", "price", json.Number("899"), "attributes", map[string]any{"color": "red"}),
		listing("s2", "Blue fabric sofa", "category", "furniture", "price", json.Number("499"), "attributes", map[string]any{"color": "blue"}),
		listing("s3", "Red garden chair", "category", "garden", "price", json.Number("49"), "attributes", map[string]any{"color": "red"}),
		listing("s4", "Oak dining table", "category", "furniture", "description", "Seats six."),
	)
	search := func(q string) []string {
		t.Helper()
		var sr searchResp
		if code := e.doJSON("GET", "/api/v1/listings/search?"+q, e.key, nil, &sr); code != 200 {
			t.Fatalf("%s: %d", q, code)
		}
		var got []string
		for _, r := range sr.Data.Results {
			got = append(got, r.ExternalID)
		}
		return got
	}
	for _, q := range []string{"zqxwvtplk", "the+zqxwvtplk", "zqxwvtplk&category=furniture", "zqxwvtplk&attr.color=red", "zqxwvtplk&maxPrice=1000"} {
		if got := search("q=" + q); len(got) != 0 {
			t.Errorf("q=%s: %v", q, got)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"q=sofa&category=furniture", "s1,s2"}, // both sofas, not the table
		{"q=sofa&attr.color=red", "s1"},
		{"q=chair&category=furniture", ""},                                    // the chair is in garden
		{"q=table&maxPrice=100", ""},                                          // no price: no match
		{"q=" + url.QueryEscape("red sofa") + "&category=furniture", "s1,s2"}, // the red one first; the blue one holds "sofa"
		{"q=" + url.QueryEscape("red sofa") + "&category=garden", "s3"},       // the garden chair holds "red"
	} {
		got := search(c.q)
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s: %v, want %s", c.q, got, c.want)
		}
	}
}
