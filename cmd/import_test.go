package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/app"
	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// importServer is a real agentd on a temp database for import tests.
type importServer struct {
	t      testing.TB
	url    string
	key    string
	dbPath string
}

func startImportServer(t testing.TB) *importServer {
	t.Helper()
	dbPath := dbtest.Path(t, "agentd.db")
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, app.Config{DBPath: dbPath, Addr: "127.0.0.1:0", Out: &out})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close()
	})
	first, _, _ := strings.Cut(out.String(), "\n")
	key, _ := strings.CutPrefix(first, "owner API key: ")
	key, _, _ = strings.Cut(key, " ")
	return &importServer{t: t, url: "http://" + a.Addr(), key: key, dbPath: dbPath}
}

// listings returns externalId -> price (or "-") of every listing, by GET sync.
func (s *importServer) listings(query string) map[string]string {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.url+"/api/v1/listings/sync"+query, nil)
	req.Header.Set("x-api-key", s.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Listings []struct {
				ExternalID string  `json:"externalId"`
				Price      *string `json:"price"`
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range body.Data.Listings {
		p := "-"
		if l.Price != nil {
			p = *l.Price
		}
		out[l.ExternalID] = p
	}
	return out
}

// runImportCLI runs agentd with args in-process; stderr ends with the
// error as main would print it.
func runImportCLI(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	root := NewRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := Execute(context.Background(), root)
	return out.String(), errb.String(), err
}

func listingFixture(name string) string { return filepath.Join("..", "testdata", "listings", name) }

// importSum runs an import with --json and decodes its summary.
func importSum(t testing.TB, args ...string) (importSummary, string, error) {
	t.Helper()
	out, errOut, err := runImportCLI(t, append([]string{"import", "--json"}, args...)...)
	var s importSummary
	if jerr := json.Unmarshal([]byte(out), &s); jerr != nil && err == nil {
		t.Fatalf("summary %q: %v", out, jerr)
	}
	return s, errOut, err
}

func TestImportFixturesBothModes(t *testing.T) {
	good := map[string]int{"products.csv": 6, "products.json": 3, "catalog.json": 2, "products.ndjson": 3, "products.jsonl": 3}
	for _, mode := range []string{"db", "server"} {
		t.Run(mode, func(t *testing.T) {
			s := startImportServer(t)
			target := []string{"--db", s.dbPath}
			if mode == "server" {
				target = []string{"--server", s.url, "--api-key", s.key}
			}
			total := 0
			for _, file := range []string{"products.csv", "products.json", "catalog.json", "products.ndjson", "products.jsonl"} {
				sum, _, err := importSum(t, append(target, listingFixture(file))...)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				n := good[file]
				if file == "products.jsonl" { // same listings as products.ndjson
					if sum.Unchanged != n || sum.Imported != 0 {
						t.Fatalf("%s: %+v", file, sum)
					}
					continue
				}
				total += n
				if sum.Mode != mode || sum.Read != n || sum.Imported != n || sum.Invalid != 0 {
					t.Fatalf("%s: %+v", file, sum)
				}
			}
			got := s.listings("")
			if len(got) != total || got["sofa-001"] != "899.00" || got["apt-3"] != "1999999.99" || got["lamp-101"] != "-" || got["gift-1"] != "0.00" {
				t.Fatalf("stored %v", got)
			}

			// Invalid lines: nothing written without --skip-invalid.
			for _, file := range []string{"invalid_items.json", "broken.ndjson", "broken_rows.csv"} {
				sum, errOut, err := importSum(t, append(target, listingFixture(file))...)
				if err == nil || sum.Imported != 0 || len(sum.Problems) == 0 || !strings.Contains(errOut, "nothing was written") {
					t.Fatalf("%s: %v %+v %s", file, err, sum, errOut)
				}
			}
			if n := len(s.listings("")); n != total {
				t.Fatalf("an invalid file wrote listings: %d", n)
			}
			sum, _, err := importSum(t, append(target, "--skip-invalid", listingFixture("invalid_items.json"))...)
			if err != nil || sum.Imported != 2 || sum.Invalid != 3 {
				t.Fatalf("skip-invalid: %v %+v", err, sum)
			}
			// Unreadable files fail before anything is sent.
			for _, file := range []string{"broken.json", "no_title.csv"} {
				if _, errOut, err := runImportCLI(t, append([]string{"import"}, append(target, listingFixture(file))...)...); err == nil || !strings.Contains(errOut, "line ") {
					t.Fatalf("%s: %v %s", file, err, errOut)
				}
			}
			if _, _, err := importSum(t, append(target, listingFixture("empty.csv"))...); err != nil {
				t.Fatalf("empty file: %v", err)
			}
		})
	}
}

func TestImportDryRunCategoryDeleteStale(t *testing.T) {
	s := startImportServer(t)
	for _, target := range [][]string{{"--db", s.dbPath}, {"--server", s.url, "--api-key", s.key}} {
		sum, _, err := importSum(t, append(target, "--dry-run", listingFixture("products.csv"))...)
		if err != nil || sum.Mode != "dry-run" || sum.Valid != 6 || len(s.listings("")) != 0 {
			t.Fatalf("dry run: %v %+v", err, sum)
		}
		sum, _, err = importSum(t, append(target, "--dry-run", listingFixture("broken_rows.csv"))...)
		// Invalid lines fail the dry run (exit 1), with the summary and problems.
		if err == nil || sum.Mode != "dry-run" || sum.Invalid != 3 || sum.Problems[0].Line != 3 {
			t.Fatalf("dry run of broken rows: %v %+v", err, sum)
		}
		if _, _, err := importSum(t, append(target, "--dry-run", "--skip-invalid", listingFixture("broken_rows.csv"))...); err != nil {
			t.Fatalf("dry run of broken rows with --skip-invalid: %v", err)
		}
	}
	// Everything into one category, then a smaller file replaces it.
	if _, _, err := importSum(t, "--db", s.dbPath, "--category", "shop", listingFixture("products.csv")); err != nil {
		t.Fatal(err)
	}
	if n := len(s.listings("?category=shop")); n != 6 {
		t.Fatalf("category override: %d in shop", n)
	}
	for i, target := range [][]string{{"--db", s.dbPath}, {"--server", s.url, "--api-key", s.key}} {
		file := []string{"catalog.json", "products.ndjson"}[i]
		sum, _, err := importSum(t, append(target, "--category", "shop", "--delete-stale", listingFixture(file))...)
		if err != nil || sum.Deleted != []int{6, 2}[i] {
			t.Fatalf("delete-stale %v: %v %+v", target, err, sum)
		}
	}
	if got := s.listings("?category=shop"); len(got) != 3 || got["car-1"] != "18990.00" {
		t.Fatalf("after delete-stale: %v", got)
	}
}

// Rate limits and server errors are retried; the import still completes.
func TestImportRetriesServer(t *testing.T) {
	s := startImportServer(t)
	target, _ := url.Parse(s.url)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit exceeded","code":"RATE_LIMITED","status":429}}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer flaky.Close()
	sum, _, err := importSum(t, "--server", flaky.URL, "--api-key", s.key, "--retry-wait", "1ms", listingFixture("products.json"))
	if err != nil || sum.Imported != 3 || calls.Load() != 3 {
		t.Fatalf("%v %+v after %d calls", err, sum, calls.Load())
	}
	// A server that keeps failing is given up on, with the reason.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer down.Close()
	_, errOut, err := runImportCLI(t, "import", "--server", down.URL, "--api-key", "k", "--retry-wait", "1ms", listingFixture("products.json"))
	if err == nil || !strings.Contains(errOut, "giving up after 6 attempts") || !strings.Contains(errOut, "502") {
		t.Fatalf("down: %v %s", err, errOut)
	}
	// A bad key is not retried.
	out, errOut, err := runImportCLI(t, "import", "--server", s.url, "--api-key", "agd_wrong", listingFixture("products.json"))
	if err == nil || !strings.Contains(errOut, "401") || out != "" {
		t.Fatalf("bad key: %v %q %s", err, out, errOut)
	}
	// No key: the error alone, before any work; no "0 imported" summary.
	out, errOut, err = runImportCLI(t, "import", "--server", s.url, listingFixture("products.json"))
	if err == nil || !strings.Contains(errOut, "--api-key") || out != "" {
		t.Fatalf("no key: %v %q %s", err, out, errOut)
	}
}

// writeListingCSV writes n generated listing rows.
func writeListingCSV(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.csv")
	var b bytes.Buffer
	b.WriteString("externalId,title,description,category,price,color,rooms\n")
	colors := []string{"red", "blue", "green", "black", "white"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "L%06d,\"Listing %d, nice\",Description of item %d with some words,cat%d,%d.%02d,%s,%d\n",
			i, i, i, i%10, i%5000, i%100, colors[i%5], 1+i%6)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImport50000Rows(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 rows; also run by BenchmarkImport50000")
	}
	s := startImportServer(t)
	path := writeListingCSV(t, 50000)
	sum, _, err := importSum(t, "--db", s.dbPath, path)
	if err != nil || sum.Imported != 50000 {
		t.Fatalf("%v %+v", err, sum)
	}
	t.Logf("50,000 rows in %.1fs", sum.Seconds)
	if got := s.listings("?category=cat3"); len(got) != 5000 || got["L000003"] != "3.03" {
		t.Fatalf("cat3: %d", len(got))
	}
}

func BenchmarkImport50000(b *testing.B) {
	s := startImportServer(b)
	path := writeListingCSV(b, 50000)
	n := 0
	for b.Loop() {
		// Each loop imports into a fresh organization, so every row is a
		// create (embedded and indexed), not an unchanged skip.
		b.StopTimer()
		n++
		org := fmt.Sprintf("bench%d", n)
		if _, _, err := runImportCLI(b, "org", "create", "--db", s.dbPath, org); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, _, err := runImportCLI(b, "import", "--db", s.dbPath, "--org", org, path); err != nil {
			b.Fatal(err)
		}
	}
}

// The progress bar's first tick shows listings over the time they took,
// not over the instant since the bar first heard of them.
func TestImportProgressRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		bar := startBar(&out, 5000, true)
		time.Sleep(2 * time.Second) // synctest's fake clock: reading the file, then the first chunk of 1000
		bar.Set(1000)
		if !strings.Contains(out.String(), "(1000/5000, 500 listings/s)") {
			t.Fatalf("first tick %q, want 500 listings/s", out.String())
		}
		time.Sleep(2 * time.Second) // synctest's fake clock
		bar.Set(3000)
		if !strings.Contains(out.String(), "(3000/5000, 750 listings/s)") {
			t.Fatalf("second tick %q, want 750 listings/s", out.String())
		}
	})
}

// import --help lists the flags import uses, not the knowledge worker's.
func TestImportHelpListsImportFlags(t *testing.T) {
	out, _, err := runImportCLI(t, "import", "--help")
	if err != nil || !strings.Contains(out, "--dry-run") || !strings.Contains(out, "--embedder") {
		t.Fatalf("%v %s", err, out)
	}
	for _, f := range []string{"--kb-workers", "--kb-lease", "--kb-poll-interval", "--search-alpha"} {
		if strings.Contains(out, f) {
			t.Errorf("import --help lists %s", f)
		}
	}
}
