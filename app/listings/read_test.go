package listings

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) ([]ImportRecord, error) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "listings", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ReadFile(name, f)
}

func TestReadListingFixtures(t *testing.T) {
	cases := []struct {
		file     string
		valid    int
		problems []string // "line N: path" prefixes, in order
	}{
		{"products.csv", 6, nil},
		{"products.json", 3, nil},
		{"catalog.json", 2, nil},
		{"products.ndjson", 3, nil},
		{"products.jsonl", 3, nil},
		{"invalid_items.json", 2, []string{"line 3: price", "line 4: externalId", "line 5: sourceUrl"}},
		{"broken.ndjson", 2, []string{"line 2: not a JSON object", "line 3: currency", "line 4: not a JSON object"}},
		{"broken_rows.csv", 1, []string{"line 3: row has 5 cells", "line 4: price", "line 5: malformed CSV"}},
		{"empty.csv", 0, nil},
	}
	for _, c := range cases {
		recs, err := readFixture(t, c.file)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		plan, err := PlanImport(recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Valid != c.valid || len(plan.Problems) != len(c.problems) {
			t.Errorf("%s: %d valid, problems %v; want %d valid, %v", c.file, plan.Valid, plan.Problems, c.valid, c.problems)
			continue
		}
		for i, p := range plan.Problems {
			if !strings.HasPrefix(p.String(), c.problems[i]) {
				t.Errorf("%s: problem %d = %q, want prefix %q", c.file, i, p.String(), c.problems[i])
			}
		}
	}
	for file, want := range map[string]string{
		"broken.json":  "line 3: malformed JSON",
		"no_title.csv": "line 1: the CSV header has no title column",
		"x.xml":        "unknown format",
	} {
		var err error
		if file == "x.xml" {
			_, err = ReadFile(file, strings.NewReader("<x/>"))
		} else {
			_, err = readFixture(t, file)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", file, err, want)
		}
	}
}

// The CSV fixture exercises quoting, embedded newlines, UTF-8, empty cells
// and attribute columns; check what they become.
func TestReadListingCSVFields(t *testing.T) {
	recs, err := readFixture(t, "products.csv")
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := PlanImport(recs, nil)
	if len(plan.Groups) != 3 || plan.Groups[0].Category != "furniture" || plan.Groups[2].Category != "" {
		t.Fatalf("groups %+v", plan.Groups)
	}
	sofa := plan.Groups[0].Items[0]
	if sofa.Title != `Sofa "Oslo", 3-seater` || sofa.Description != "Deep seats, washable covers.\nDelivered assembled." ||
		sofa.PriceCents != 89900 || string(sofa.Attributes) != `{"color":"grey","material":"fabric","seats":"3","tags":"living room"}` {
		t.Fatalf("sofa %+v %s", sofa, sofa.Attributes)
	}
	if l := plan.Groups[0].Lines; l[0] != 2 || l[1] != 4 || l[2] != 5 {
		t.Fatalf("lines %v (a quoted newline spans two lines)", l)
	}
	leather := plan.Groups[0].Items[1]
	if leather.Title != "Ledersofa Münchën" || leather.Currency != "EUR" || leather.PriceCents != 149950 ||
		leather.SourceURL != "https://shop.example/p/sofa-002?ref=csv&x=1" {
		t.Fatalf("leather %+v", leather)
	}
	lamp := plan.Groups[1].Items[1]
	if lamp.HasPrice || lamp.Title != "Lamp, brass" || string(lamp.Attributes) != `{"material":"brass"}` {
		t.Fatalf("lamp %+v %s", lamp, lamp.Attributes)
	}
	// A category override puts everything in one group.
	cat := "sale"
	plan, _ = PlanImport(recs, &cat)
	if len(plan.Groups) != 1 || plan.Groups[0].Category != "sale" || len(plan.Groups[0].Items) != 6 {
		t.Fatalf("override %+v", plan.Groups)
	}
	// A BOM before the header is ignored.
	recs, err = ReadFile("x.csv", strings.NewReader("\ufeffexternalId,title\na,b\n"))
	if err != nil || len(recs) != 1 || string(recs[0].Raw) != `{"externalId":"a","title":"b"}` {
		t.Fatalf("bom: %v %+v", err, recs)
	}
}

func FuzzReadListingFile(f *testing.F) {
	for _, name := range []string{"products.csv", "products.json", "products.ndjson", "broken_rows.csv", "broken.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "listings", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Ext(name), b)
	}
	f.Fuzz(func(t *testing.T, ext string, data []byte) {
		if ext != ".csv" && ext != ".json" && ext != ".ndjson" {
			ext = ".csv"
		}
		recs, err := ReadFile("f"+ext, bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Line < 1 || (r.Err == "" && len(r.Raw) == 0) {
				t.Fatalf("record %+v", r)
			}
		}
		if _, err := PlanImport(recs, nil); err != nil {
			t.Fatal(err)
		}
	})
}
