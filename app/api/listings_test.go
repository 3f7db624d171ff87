package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/listings"
)

var updateGolden = flag.Bool("update-listings", false, "rewrite testdata/golden/listings")

// syncResp is the POST /api/v1/listings/sync response.
type syncResp struct {
	Data struct {
		Imported, Updated, Unchanged, Failed, Deleted int
		Results                                       struct {
			Imported, Updated, Unchanged, Failed []listings.SyncItem
		}
	}
	Meta struct{ Timestamp, Message string }
}

type summaryResp struct {
	Data struct {
		Listings []struct {
			ID, ExternalID, Title, Status, UpdatedAt string
			Price, SourceURL                         *string
		}
		Total int
	}
}

type searchResp struct {
	Data struct {
		Results []struct {
			ID, ExternalID, Title, Description, Currency string
			Category, Price, SourceURL                   *string
			Attributes                                   map[string]any
			Score                                        *float64
		}
	}
}

type errResp struct {
	Error struct {
		Message, Timestamp string
		Status             int
	}
	Details []FieldError
}

func listing(ext, title string, extra ...any) map[string]any {
	m := map[string]any{"externalId": ext, "title": title}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

func (e *testEnv) sync(key string, deleteStale bool, items ...map[string]any) syncResp {
	e.t.Helper()
	var out syncResp
	if code := e.doJSON("POST", "/api/v1/listings/sync", key, map[string]any{"listings": items, "deleteStale": deleteStale}, &out); code != 200 {
		e.t.Fatalf("sync: status %d %+v", code, out)
	}
	return out
}

func (e *testEnv) summaries(key, query string) summaryResp {
	e.t.Helper()
	var out summaryResp
	if code := e.doJSON("GET", "/api/v1/listings/sync"+query, key, nil, &out); code != 200 {
		e.t.Fatalf("get sync: status %d", code)
	}
	return out
}

func TestListingsSyncCreateUpdateUnchanged(t *testing.T) {
	e := newTestEnv(t)
	a := listing("a", "Red sofa", "category", "furniture", "price", json.Number("12.5"),
		"attributes", map[string]any{"color": "red", "seats": 3}, "sourceUrl", "https://shop.example/a")
	b := listing("b", "Oak table", "category", "furniture", "price", json.Number("0"))
	r := e.sync(e.key, false, a, b)
	if r.Data.Imported != 2 || r.Data.Updated != 0 || r.Data.Unchanged != 0 || len(r.Data.Results.Imported) != 2 {
		t.Fatalf("first sync: %+v", r.Data)
	}
	idA := r.Data.Results.Imported[0].ID
	if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(idA) || r.Data.Results.Imported[0].ExternalID != "a" ||
		r.Data.Results.Imported[0].Title != "Red sofa" {
		t.Fatalf("imported item %+v", r.Data.Results.Imported[0])
	}
	if !strings.Contains(r.Meta.Message, "2 imported") || r.Meta.Timestamp == "" {
		t.Fatalf("meta %+v", r.Meta)
	}

	// Same payload: nothing imported or updated, updatedAt untouched.
	before := e.summaries(e.key, "")
	r = e.sync(e.key, false, a, b)
	if r.Data.Imported != 0 || r.Data.Updated != 0 || r.Data.Unchanged != 2 || r.Data.Results.Unchanged[0].ID != idA {
		t.Fatalf("identical sync: %+v", r.Data)
	}
	if after := e.summaries(e.key, ""); after.Data.Listings[0].UpdatedAt != before.Data.Listings[0].UpdatedAt {
		t.Fatalf("unchanged listing was rewritten")
	}

	// A changed price is an update of the same id.
	a["price"] = json.Number("13")
	r = e.sync(e.key, false, a)
	if r.Data.Updated != 1 || r.Data.Results.Updated[0].ID != idA || r.Data.Results.Updated[0].Title != "Red sofa" {
		t.Fatalf("update: %+v", r.Data)
	}
	s := e.summaries(e.key, "")
	if s.Data.Total != 2 || *s.Data.Listings[0].Price != "13.00" || s.Data.Listings[0].Status != "active" ||
		*s.Data.Listings[0].SourceURL != "https://shop.example/a" || *s.Data.Listings[1].Price != "0.00" || s.Data.Listings[1].SourceURL != nil {
		t.Fatalf("summaries %+v", s.Data)
	}

	// A repeated externalId inside one request is an update of the earlier item.
	r = e.sync(e.key, false, listing("c", "One"), listing("c", "Two"), listing("c", "Two"))
	if r.Data.Imported != 1 || r.Data.Updated != 1 || r.Data.Unchanged != 1 {
		t.Fatalf("repeated externalId: %+v", r.Data)
	}
	var sr searchResp
	e.doJSON("GET", "/api/v1/listings/search?q=two", e.key, nil, &sr)
	if len(sr.Data.Results) == 0 || sr.Data.Results[0].Title != "Two" || sr.Data.Results[0].ExternalID != "c" {
		t.Fatalf("last write wins: %+v", sr.Data)
	}
}

func TestListingsPriceFormatting(t *testing.T) {
	e := newTestEnv(t)
	e.sync(e.key, false,
		listing("p1", "a", "price", json.Number("12.5")),
		listing("p2", "b", "price", json.Number("0")),
		listing("p3", "c", "price", json.Number("1999999.99")),
		listing("p4", "d", "price", json.Number("1.5e1")),
		listing("p5", "e"),
		listing("p6", "f", "price", json.Number("999999999999.99")),
	)
	want := map[string]any{"p1": "12.50", "p2": "0.00", "p3": "1999999.99", "p4": "15.00", "p5": nil, "p6": "999999999999.99"}
	_, _, body := e.do("GET", "/api/v1/listings/sync", e.key, nil)
	var raw struct {
		Data struct{ Listings []map[string]any }
	}
	json.Unmarshal(body, &raw)
	if len(raw.Data.Listings) != len(want) {
		t.Fatalf("listings: %s", body)
	}
	for _, l := range raw.Data.Listings {
		if l["price"] != want[l["externalId"].(string)] {
			t.Errorf("%v price %#v, want %#v", l["externalId"], l["price"], want[l["externalId"].(string)])
		}
	}
}

func TestListingsDeleteStalePerCategory(t *testing.T) {
	e := newTestEnv(t)
	e.sync(e.key, false,
		listing("f1", "Sofa", "category", "furniture"), listing("f2", "Chair", "category", "furniture"),
		listing("l1", "Lamp", "category", "lighting"), listing("n1", "Gift card"), listing("n2", "Voucher"))
	// Only furniture is compared: f2 goes, the lamp and uncategorised stay.
	r := e.sync(e.key, true, listing("f1", "Sofa", "category", "furniture"))
	if r.Data.Deleted != 1 || r.Data.Unchanged != 1 {
		t.Fatalf("furniture stale: %+v", r.Data)
	}
	// A first item without category compares against listings without category.
	r = e.sync(e.key, true, listing("n1", "Gift card"), listing("l1", "Lamp", "category", "lighting"))
	if r.Data.Deleted != 1 {
		t.Fatalf("uncategorised stale: %+v", r.Data)
	}
	s := e.summaries(e.key, "")
	got := []string{}
	for _, l := range s.Data.Listings {
		got = append(got, l.ExternalID)
	}
	if strings.Join(got, ",") != "n1,f1,l1" || s.Data.Total != 3 {
		t.Fatalf("left: %v", got)
	}
	if c := e.summaries(e.key, "?category=lighting"); c.Data.Total != 1 || c.Data.Listings[0].ExternalID != "l1" {
		t.Fatalf("category filter: %+v", c.Data)
	}
	// Hard delete: the same externalId comes back as a new listing.
	if r := e.sync(e.key, false, listing("f2", "Chair", "category", "furniture")); r.Data.Imported != 1 {
		t.Fatalf("re-create: %+v", r.Data)
	}
}

func TestListingsValidationErrors(t *testing.T) {
	e := newTestEnv(t)
	cases := []struct {
		name string
		body any
		path string
	}{
		{"no listings", map[string]any{}, "listings"},
		{"listings not array", map[string]any{"listings": "x"}, "listings"},
		{"empty", map[string]any{"listings": []any{}}, "listings"},
		{"deleteStale type", map[string]any{"listings": []any{listing("a", "b")}, "deleteStale": "yes"}, "deleteStale"},
		{"missing externalId", map[string]any{"listings": []any{listing("a", "b"), map[string]any{"title": "x"}}}, "listings.1.externalId"},
		{"missing title", map[string]any{"listings": []any{map[string]any{"externalId": "x"}}}, "listings.0.title"},
		{"negative price", map[string]any{"listings": []any{listing("a", "b"), listing("c", "d"), listing("e", "f"), listing("x", "y", "price", -1)}}, "listings.3.price"},
		{"price string", map[string]any{"listings": []any{listing("x", "y", "price", "12.50")}}, "listings.0.price"},
		{"price decimals", map[string]any{"listings": []any{listing("x", "y", "price", json.Number("1.005"))}}, "listings.0.price"},
		{"currency", map[string]any{"listings": []any{listing("x", "y", "currency", "EURO")}}, "listings.0.currency"},
		{"url", map[string]any{"listings": []any{listing("x", "y", "sourceUrl", "not a url")}}, "listings.0.sourceUrl"},
		{"attributes", map[string]any{"listings": []any{listing("x", "y", "attributes", []any{"a"})}}, "listings.0.attributes"},
		{"attribute value", map[string]any{"listings": []any{listing("x", "y", "attributes", map[string]any{"size": map[string]any{"w": 1}})}}, "listings.0.attributes.size"},
		{"item not object", map[string]any{"listings": []any{42}}, "listings.0"},
	}
	for _, c := range cases {
		var out errResp
		code := e.doJSON("POST", "/api/v1/listings/sync", e.key, c.body, &out)
		if code != 400 || out.Error.Status != 400 || out.Error.Timestamp == "" || len(out.Details) == 0 || out.Details[0].Path != c.path {
			t.Errorf("%s: %d %+v, want 400 at %s", c.name, code, out, c.path)
		}
	}
	// All or nothing: one bad item writes none.
	if s := e.summaries(e.key, ""); s.Data.Total != 0 {
		t.Fatalf("a failed request wrote %d listings", s.Data.Total)
	}
	// Every problem is reported, not only the first.
	var out errResp
	e.doJSON("POST", "/api/v1/listings/sync", e.key, map[string]any{"listings": []any{
		map[string]any{"price": -2, "currency": "x"}}}, &out)
	if len(out.Details) != 4 {
		t.Fatalf("details %+v", out.Details)
	}
	checkGolden(t, "sync_validation.json", mustBody(e.do("POST", "/api/v1/listings/sync", e.key, map[string]any{"listings": []any{
		listing("ok", "fine"), map[string]any{"title": "no id", "price": -1, "sourceUrl": "ftp://x", "attributes": map[string]any{"a": nil}}}})))
	// Malformed JSON and wrong-type bodies are 400 in the listings shape.
	code, _, body := e.do("POST", "/api/v1/listings/sync", e.key, `{"listings": [`)
	if code != 400 || !strings.Contains(string(body), `"status":400`) {
		t.Fatalf("malformed: %d %s", code, body)
	}
}

func mustBody(code int, _ any, body []byte) []byte {
	if code != 400 {
		panic(fmt.Sprintf("status %d: %s", code, body))
	}
	return body
}

// checkGolden compares an error body with testdata/golden/listings/NAME,
// the timestamp blanked.
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	body = regexp.MustCompile(`"timestamp":"[^"]*"`).ReplaceAll(body, []byte(`"timestamp":"TIMESTAMP"`))
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		t.Fatalf("golden %s: %v: %s", name, err, body)
	}
	path := filepath.Join("..", "..", "testdata", "golden", "listings", name)
	if *updateGolden {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run with -update-listings)", name, err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(pretty.Bytes())) {
		t.Fatalf("golden %s differs:\n%s\nwant:\n%s", name, pretty.Bytes(), want)
	}
}

func TestListingsLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,500 listings")
	}
	e := newTestEnv(t)
	batch := func(start, n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = listing(fmt.Sprintf("x%05d", start+i), fmt.Sprintf("Listing %d", start+i), "category", "bulk",
				"price", json.Number(fmt.Sprintf("%d.%02d", i, i%100)), "attributes", map[string]any{"n": i % 7})
		}
		return out
	}
	var out errResp
	if code := e.doJSON("POST", "/api/v1/listings/sync", e.key, map[string]any{"listings": batch(0, 1001)}, &out); code != 400 ||
		out.Details[0].Path != "listings" || !strings.Contains(out.Details[0].Message, "at most 1000") {
		t.Fatalf("1001 listings: %d %+v", code, out)
	}
	for i := 0; i < 10500; i += 1000 {
		n := min(1000, 10500-i)
		if r := e.sync(e.key, false, batch(i, n)...); r.Data.Imported != n {
			t.Fatalf("batch %d: %+v", i, r.Data.Imported)
		}
	}
	s := e.summaries(e.key, "?category=bulk")
	if len(s.Data.Listings) != 10000 || s.Data.Total != 10500 {
		t.Fatalf("GET returned %d of %d", len(s.Data.Listings), s.Data.Total)
	}
}

func TestListingsTenantIsolation(t *testing.T) {
	e := newTestEnv(t)
	_, keyB := e.newOrg("beta")
	ra := e.sync(e.key, false, listing("same", "Org A item", "attributes", map[string]any{"color": "red"}))
	rb := e.sync(keyB, false, listing("same", "Org B item", "attributes", map[string]any{"color": "red"}))
	if rb.Data.Imported != 1 || rb.Data.Results.Imported[0].ID == ra.Data.Results.Imported[0].ID {
		t.Fatalf("org B sync: %+v", rb.Data)
	}
	// deleteStale in B never touches A.
	e.sync(keyB, true, listing("other", "B2"))
	if s := e.summaries(e.key, ""); s.Data.Total != 1 || s.Data.Listings[0].Title != "Org A item" {
		t.Fatalf("org A after B's sync: %+v", s.Data)
	}
	for _, q := range []string{"?attr.color=red", "?q=item"} {
		var sr searchResp
		e.doJSON("GET", "/api/v1/listings/search"+q, keyB, nil, &sr)
		for _, r := range sr.Data.Results {
			if r.Title == "Org A item" {
				t.Fatalf("org B sees org A's listing via %s", q)
			}
		}
	}
	if code, _, _ := e.do("GET", "/api/v1/listings/sync", "", nil); code != 401 {
		t.Fatalf("no key: %d", code)
	}
}

func TestListingsSearchFilters(t *testing.T) {
	e := newTestEnv(t)
	e.sync(e.key, false,
		listing("s1", "Red leather sofa", "category", "furniture", "price", json.Number("899"),
			"attributes", map[string]any{"color": "Red", "seats": 3, "tags": []any{"leather", "modern"}, "outdoor": false}),
		listing("s2", "Blue fabric sofa", "category", "furniture", "price", json.Number("499.99"),
			"attributes", map[string]any{"color": "blue", "seats": "3"}),
		listing("s3", "Red garden chair", "category", "garden", "price", json.Number("49.5"),
			"attributes", map[string]any{"color": "red", "seats": 1, "outdoor": true}),
		listing("s4", "Red lamp", "category", "lighting", "attributes", map[string]any{"color": "red"}),
	)
	cases := []struct {
		query string
		want  string // external ids in order
	}{
		{"attr.color=red", "s4,s3,s1"}, // newest first, case-insensitive
		{"attr.color=red&category=furniture", "s1"},
		{"attr.seats=3", "s2,s1"},   // number 3 and string "3"
		{"attr.seats=3.0", "s2,s1"}, // any notation of the number
		{"attr.tags=leather", "s1"}, // array element
		{"attr.outdoor=true", "s3"},
		{"attr.color=red&attr.color=blue&maxPrice=500", "s3,s2"}, // repeated key: any of
		{"minPrice=49.50&maxPrice=499.99", "s3,s2"},
		{"minPrice=900", ""},
		{"attr.color=green", ""},
		{"q=sofa&attr.color=red", "s1"},
		{"q=red&category=garden", "s3"},
		{"attr.color=red&limit=1", "s4"},
	}
	for _, c := range cases {
		var sr searchResp
		if code := e.doJSON("GET", "/api/v1/listings/search?"+c.query, e.key, nil, &sr); code != 200 {
			t.Fatalf("%s: %d", c.query, code)
		}
		var got []string
		for _, r := range sr.Data.Results {
			got = append(got, r.ExternalID)
			if strings.HasPrefix(c.query, "q=") != (r.Score != nil) {
				t.Errorf("%s: score %v", c.query, r.Score)
			}
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("search %s = %v, want %s", c.query, got, c.want)
		}
	}
	var sr searchResp
	e.doJSON("GET", "/api/v1/listings/search?q=leather", e.key, nil, &sr)
	if len(sr.Data.Results) == 0 || sr.Data.Results[0].ExternalID != "s1" {
		t.Fatalf("leather: %+v", sr.Data.Results)
	}
	r := sr.Data.Results[0]
	if *r.Price != "899.00" || r.Currency != "EUR" || *r.Category != "furniture" || r.Attributes["seats"] != float64(3) || r.SourceURL != nil {
		t.Fatalf("result shape %+v", r)
	}
	for _, bad := range []string{"limit=0", "limit=101", "limit=x", "minPrice=-1", "maxPrice=abc", "q=" + url.QueryEscape(strings.Repeat("a", 1001))} {
		var out errResp
		if code := e.doJSON("GET", "/api/v1/listings/search?"+bad, e.key, nil, &out); code != 400 || len(out.Details) != 1 {
			t.Errorf("%s: %d %+v", bad, code, out)
		}
	}
}

func TestListingsBodyLimitAndConcurrentSyncs(t *testing.T) {
	e := newTestEnv(t)
	big := `{"listings":[{"externalId":"a","title":"` + strings.Repeat("x", 33<<20) + `"}]}`
	var out errResp
	if code := e.doJSON("POST", "/api/v1/listings/sync", e.key, big, &out); code != 413 || out.Error.Status != 413 {
		t.Fatalf("33 MiB body: %d %+v", code, out)
	}
	// Concurrent syncs of the same new listings: each listing is created
	// once; the losers report updated, unchanged or failed, never a 500.
	items := []map[string]any{listing("c1", "Same"), listing("c2", "Same")}
	codes := make(chan int, 4)
	for range 4 {
		go func() {
			code, _, _ := e.do("POST", "/api/v1/listings/sync", e.key, map[string]any{"listings": items})
			codes <- code
		}()
	}
	for range 4 {
		if c := <-codes; c != 200 {
			t.Fatalf("concurrent sync: %d", c)
		}
	}
	if s := e.summaries(e.key, ""); s.Data.Total != 2 {
		t.Fatalf("concurrent syncs made %d listings", s.Data.Total)
	}
}
