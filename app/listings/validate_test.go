package listings

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/errs"
)

func FuzzParseListing(f *testing.F) {
	for _, s := range []string{
		`{"externalId":"a","title":"T","price":12.5,"attributes":{"color":"red","rooms":3,"tags":["a",1,true]}}`,
		`{"externalId":1}`, `[]`, `{"price":"x","currency":"eu","sourceUrl":"ftp://x"}`, `null`,
		`{"externalId":"a","title":"b","attributes":{"":[[1]]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, errs := Parse(raw)
		if len(errs) > 0 {
			for _, e := range errs {
				if e.Message == "" {
					t.Fatalf("empty message for %q", e.Path)
				}
			}
			return
		}
		if in.ExternalID == "" || in.Title == "" || !isCurrency(in.Currency) {
			t.Fatalf("accepted invalid listing %+v", in)
		}
		if !json.Valid(in.Attributes) || !strings.HasPrefix(string(in.Attributes), "{") {
			t.Fatalf("attributes not an object: %s", in.Attributes)
		}
		_ = listingTerms(in.Attributes)
		_ = in.embedText()
	})
}

func TestParseListingErrors(t *testing.T) {
	cases := []struct {
		body, path string
	}{
		{`{"title":"x"}`, "externalId"},
		{`{"externalId":"  ","title":"x"}`, "externalId"},
		{`{"externalId":5,"title":"x"}`, "externalId"},
		{`{"externalId":"a"}`, "title"},
		{`{"externalId":"a","title":"x","price":-1}`, "price"},
		{`{"externalId":"a","title":"x","price":"12"}`, "price"},
		{`{"externalId":"a","title":"x","price":1.234}`, "price"},
		{`{"externalId":"a","title":"x","currency":"EURO"}`, "currency"},
		{`{"externalId":"a","title":"x","currency":"E1R"}`, "currency"},
		{`{"externalId":"a","title":"x","sourceUrl":"example.com/x"}`, "sourceUrl"},
		{`{"externalId":"a","title":"x","sourceUrl":"javascript:alert(1)"}`, "sourceUrl"},
		{`{"externalId":"a","title":"x","sourceUrl":"https://e.com/` + strings.Repeat("a", 2048) + `"}`, "sourceUrl"},
		{`{"externalId":"a","title":"x","attributes":[1]}`, "attributes"},
		{`{"externalId":"a","title":"x","attributes":{"c":null}}`, "attributes.c"},
		{`{"externalId":"a","title":"x","attributes":{"c":{"d":1}}}`, "attributes.c"},
		{`{"externalId":"a","title":"x","attributes":{"c":[[1]]}}`, "attributes.c"},
		{`"x"`, ""},
	}
	for _, c := range cases {
		_, errs := Parse([]byte(c.body))
		if len(errs) != 1 || errs[0].Path != c.path {
			t.Errorf("%s: errors %+v, want one at %q", c.body, errs, c.path)
		}
	}
	in, errs := Parse([]byte(`{"externalId":" a ","title":"T","currency":"usd","price":0,
		"attributes":{"tags":["x",2,false],"rooms":3.0},"sourceUrl":"https://example.com/a?b=c"}`))
	if len(errs) != 0 || in.ExternalID != "a" || in.Currency != "USD" || !in.HasPrice || in.PriceCents != 0 {
		t.Fatalf("valid listing: %+v %+v", in, errs)
	}
	if string(in.Attributes) != `{"rooms":3.0,"tags":["x",2,false]}` {
		t.Fatalf("attributes %s", in.Attributes)
	}
}

// ParseSync reports every problem with its item's path, in one Invalid
// error whose message names the first.
func TestParseSync(t *testing.T) {
	body := func(listings, deleteStale string) SyncBody {
		return SyncBody{Listings: json.RawMessage(listings), DeleteStale: json.RawMessage(deleteStale)}
	}
	items, stale, err := ParseSync(body(`[{"externalId":"a","title":"A","category":"c"}]`, `true`))
	if err != nil || len(items) != 1 || !stale || items[0].Category != "c" {
		t.Fatalf("valid body: %+v %v %v", items, stale, err)
	}
	cases := []struct {
		body  SyncBody
		msg   string
		paths []string
	}{
		{body(``, ``), "Validation failed: listings is required", []string{"listings"}},
		{body(`null`, `"yes"`), "Validation failed: deleteStale must be a boolean (and 1 more)", []string{"deleteStale", "listings"}},
		{body(`{}`, ``), "Validation failed: listings must be an array", []string{"listings"}},
		{body(`[]`, ``), "Validation failed: listings must contain at least 1 listing", []string{"listings"}},
		{body(`[{"externalId":"a","title":"A"},{"title":"B","price":-1},7]`, ``),
			"Validation failed: listings.1.externalId is required (and 2 more)",
			[]string{"listings.1.externalId", "listings.1.price", "listings.2"}},
	}
	for _, c := range cases {
		_, _, err := ParseSync(c.body)
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Message != c.msg || len(e.Details) != len(c.paths) {
			t.Errorf("%s: %#v, want %q with %v", c.body.Listings, err, c.msg, c.paths)
			continue
		}
		for i, d := range e.Details {
			if d.Path != c.paths[i] {
				t.Errorf("%s: detail %d at %q, want %q", c.body.Listings, i, d.Path, c.paths[i])
			}
		}
	}
	many := "[" + strings.Repeat(`{"externalId":"a","title":"A"},`, MaxSync) + `{"externalId":"a","title":"A"}]`
	if _, _, err := ParseSync(body(many, ``)); err == nil || !strings.Contains(err.Error(), "at most 1000 listings (got 1001)") {
		t.Fatalf("1001 listings: %v", err)
	}
}
