package app

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseCents(t *testing.T) {
	ok := map[string]int64{
		"0": 0, "-0": 0, "0.0": 0, "12.5": 1250, "12.50": 1250, "12.500": 1250, "1999999.99": 199999999,
		"1e3": 100000, "1.5E2": 15000, "125e-2": 125, "0.01": 1, "999999999999.99": maxPriceCents,
		"007": 700, "0e400": 0, "10": 1000,
	}
	for in, want := range ok {
		got, err := parseCents(in)
		if err != nil || got != want {
			t.Errorf("parseCents(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]error{
		"-1": errPriceNegative, "-0.01": errPriceNegative, "0.001": errPriceDecimals, "12.345": errPriceDecimals,
		"1e-3": errPriceDecimals, "1000000000000": errPriceTooLarge, "1e20": errPriceTooLarge,
		"abc": errPriceSyntax, "": errPriceSyntax, "1.": errPriceSyntax, ".5": errPriceSyntax, "1e": errPriceSyntax,
		"1e9999": errPriceExpTooBig, "1,5": errPriceSyntax, "99999999999999999999999": errPriceTooLarge,
	}
	for in, want := range bad {
		if _, err := parseCents(in); !errors.Is(err, want) {
			t.Errorf("parseCents(%q) error = %v, want %v", in, err, want)
		}
	}
}

func TestFormatCents(t *testing.T) {
	for c, want := range map[int64]string{0: "0.00", 1: "0.01", 1250: "12.50", 199999999: "1999999.99", maxPriceCents: "999999999999.99"} {
		if got := formatCents(c); got != want {
			t.Errorf("formatCents(%d) = %q, want %q", c, got, want)
		}
	}
}

func FuzzParseCents(f *testing.F) {
	for _, s := range []string{"12.50", "1e3", "-0", "0.001", "1e-400", "999999999999.99", "1.5E+2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCents(s)
		if err != nil {
			return
		}
		if c < 0 || c > maxPriceCents {
			t.Fatalf("parseCents(%q) = %d out of range", s, c)
		}
		// Whatever parsed must survive the round trip through its own text.
		back, err := parseCents(formatCents(c))
		if err != nil || back != c {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, c, formatCents(c), back, err)
		}
	})
}

func FuzzParseListing(f *testing.F) {
	for _, s := range []string{
		`{"externalId":"a","title":"T","price":12.5,"attributes":{"color":"red","rooms":3,"tags":["a",1,true]}}`,
		`{"externalId":1}`, `[]`, `{"price":"x","currency":"eu","sourceUrl":"ftp://x"}`, `null`,
		`{"externalId":"a","title":"b","attributes":{"":[[1]]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, errs := ParseListing(raw)
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
		_, errs := ParseListing([]byte(c.body))
		if len(errs) != 1 || errs[0].Path != c.path {
			t.Errorf("%s: errors %+v, want one at %q", c.body, errs, c.path)
		}
	}
	in, errs := ParseListing([]byte(`{"externalId":" a ","title":"T","currency":"usd","price":0,
		"attributes":{"tags":["x",2,false],"rooms":3.0},"sourceUrl":"https://example.com/a?b=c"}`))
	if len(errs) != 0 || in.ExternalID != "a" || in.Currency != "USD" || !in.HasPrice || in.PriceCents != 0 {
		t.Fatalf("valid listing: %+v %+v", in, errs)
	}
	if string(in.Attributes) != `{"rooms":3.0,"tags":["x",2,false]}` {
		t.Fatalf("attributes %s", in.Attributes)
	}
}
