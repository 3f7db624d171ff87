package kb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/app/kb/web"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/safehttp"
	"github.com/agentd/agentd/internal/testkit/doctest"
)

const clinic = `# Opening hours

The clinic opens at 8 am on weekdays.

## Prices

| Service | Price |
|---------|-------|
| Cleaning | 80 EUR |
| Whitening | 250 EUR |

- Bring your insurance card
`

func TestUploadedFilesAreSearchable(t *testing.T) {
	k := newKB(t, testCfg(newTestEmbedder(t, 256)))
	col := k.collection("files")
	files := map[string][]byte{
		"clinic.docx": doctest.Make(t, clinic, "docx"),
		"clinic.pdf":  doctest.Make(t, clinic, "pdf"),
		"clinic.html": doctest.Make(t, clinic, "html"),
		"clinic.pptx": doctest.Make(t, clinic, "pptx"),
		"prices.xlsx": doctest.XLSX(t, "Prices", [][]string{{"Service", "Price"}, {"Cleaning", "80"}, {"Whitening", "250"}}),
		"prices.csv":  []byte("Service,Price\nCleaning,80\nWhitening,250\n"),
	}
	for name, data := range files {
		res, err := k.svc.Upload(context.Background(), k.org, UploadInput{CollectionID: col, FileName: name, Data: data})
		if err != nil || res.Status != StatusProcessing {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
	}
	srcs := k.waitProcessed(col)
	if len(srcs) != len(files) {
		t.Fatalf("%d sources, want %d", len(srcs), len(files))
	}
	for _, s := range srcs {
		if s.Status != "completed" {
			t.Errorf("%s: %s %v", s.ExternalID, s.Status, s.Error)
		}
	}
	hits := k.search(col, "whitening price", "keyword", 10)
	rows := 0
	for _, h := range hits {
		if strings.Contains(h.Content, "| Whitening | 250") {
			rows++
		}
	}
	if rows < 5 { // every file but the slides, whose table is its own slide's
		t.Fatalf("the table row is whole in %d hits, want >= 5:\n%+v", rows, hits)
	}
	// The same file again is unchanged (hash dedupe).
	res, err := k.svc.Upload(context.Background(), k.org, UploadInput{CollectionID: col, FileName: "prices.csv", Data: files["prices.csv"]})
	if err != nil || res.Status != StatusUnchanged {
		t.Fatalf("re-upload: %+v %v", res, err)
	}
}

func TestUploadRefusalsAndFailures(t *testing.T) {
	k := newKB(t, testCfg(newTestEmbedder(t, 64)))
	col := k.collection("files")
	for name, data := range map[string][]byte{
		"photo.png":  []byte("\x89PNG\r\n\x1a\n\x00\x00\x00"),
		"locked.xls": []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 rest"),
		"empty.txt":  []byte(" \n"),
	} {
		_, err := k.svc.Upload(context.Background(), k.org, UploadInput{CollectionID: col, FileName: name, Data: data})
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != "file" {
			t.Errorf("%s: %v, want a 400 on file", name, err)
		}
	}
	if n := len(k.sources(col)); n != 0 {
		t.Fatalf("refused files left %d sources", n)
	}
	// A damaged Word file is recorded as a failed source with the reason.
	res, err := k.svc.Upload(context.Background(), k.org, UploadInput{CollectionID: col, FileName: "broken.docx", Data: []byte("PK\x03\x04garbage")})
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("broken docx: %+v %v", res, err)
	}
	srcs := k.sources(col)
	if len(srcs) != 1 || srcs[0].Status != "failed" || srcs[0].Error == nil || !strings.Contains(*srcs[0].Error, "conversion failed") {
		t.Fatalf("sources %+v", srcs)
	}
}

// webKB is a knowledge base whose web worker runs and may fetch loopback.
func webKB(t *testing.T) *testKB {
	cfg := testCfg(newTestEmbedder(t, 64))
	c := safehttp.New(safehttp.Options{AllowPrivate: true})
	cfg.Fetch = func(ctx context.Context, url string, h map[string]string, limit int64) (web.Response, error) {
		p, err := c.Get(ctx, url, h, limit)
		return web.Response{URL: p.URL, Status: p.Status, ContentType: p.ContentType, ETag: p.ETag, LastModified: p.LastModified, Body: p.Body}, err
	}
	cfg.MinRefresh = 50 * time.Millisecond
	k := newKB(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { k.svc.RunWeb(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return k
}

func TestURLSourceRefreshedOnlyWhenChanged(t *testing.T) {
	k := webKB(t)
	col := k.collection("web")
	var version atomic.Int32
	version.Store(1)
	var full, notModified atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		etag := fmt.Sprintf(`"v%d"`, version.Load())
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", etag)
		fmt.Fprintf(w, "<html><head><title>Hours</title></head><body><h1>Hours</h1><p>Version %d: open at %d am.</p></body></html>", version.Load(), 7+version.Load())
	}))
	defer srv.Close()
	refresh := []byte(`"100ms"`)
	res, err := k.svc.AddURL(context.Background(), k.org, URLInput{CollectionID: col, URL: srv.URL + "/hours", RefreshInterval: refresh})
	if err != nil || res.Status != StatusProcessing || res.ExternalID != srv.URL+"/hours" {
		t.Fatalf("add: %+v %v", res, err)
	}
	k.waitProcessed(col)
	waitFor(t, func() bool { return notModified.Load() >= 2 })
	before := k.sources(col)[0]
	if full.Load() != 1 {
		t.Fatalf("an unchanged page was fetched whole %d times", full.Load())
	}
	version.Store(2)
	waitFor(t, func() bool {
		hits := k.search(col, "open", "keyword", 5)
		return len(hits) > 0 && strings.Contains(hits[0].Content, "Version 2")
	})
	after := k.waitProcessed(col)[0]
	if after.ID != before.ID || !after.UpdatedAt.After(before.UpdatedAt) {
		t.Fatalf("source before %+v after %+v", before, after)
	}
	views, err := k.svc.ListWeb(context.Background(), k.org, col)
	if err != nil || len(views) != 1 || views[0].LastFetchedAt == nil || views[0].LastError != nil {
		t.Fatalf("web sources %+v %v", views, err)
	}
}

func TestURLSourceRefusals(t *testing.T) {
	k := webKB(t)
	col := k.collection("web")
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for name, in := range map[string]URLInput{
		"scheme":   {CollectionID: col, URL: "ftp://example.com/x"},
		"404":      {CollectionID: col, URL: srv.URL + "/missing"},
		"refresh":  {CollectionID: col, URL: srv.URL, RefreshInterval: []byte(`"1ns"`)},
		"crawl":    {CollectionID: col, Crawl: &CrawlInput{}},
		"maxPages": {CollectionID: col, URL: srv.URL, Crawl: &CrawlInput{MaxPages: 5000}},
	} {
		_, err := k.svc.AddURL(context.Background(), k.org, in)
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid {
			t.Errorf("%s: %v, want a 400", name, err)
		}
	}
	if n := len(k.sources(col)); n != 0 {
		t.Fatalf("%d sources written", n)
	}
}

func TestCrawlWritesEachPage(t *testing.T) {
	k := webKB(t)
	col := k.collection("site")
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nDisallow: /admin\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><title>Home</title><body><p>Home of the clinic.</p><a href="/team">Team</a> <a href="/admin">Admin</a> <a href="/prices">Prices</a> <a href="/faq">FAQ</a></body></html>`)
		case "/team", "/prices", "/faq", "/admin":
			fmt.Fprintf(w, `<html><title>%s</title><body><p>About %s.</p></body></html>`, r.URL.Path[1:], r.URL.Path[1:])
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := k.svc.AddURL(context.Background(), k.org, URLInput{CollectionID: col, URL: srv.URL + "/", Crawl: &CrawlInput{MaxPages: 3}})
	if err != nil || res.Status != StatusProcessing {
		t.Fatalf("crawl: %+v %v", res, err)
	}
	waitFor(t, func() bool {
		v, _ := k.svc.ListWeb(context.Background(), k.org, col)
		return len(v) == 1 && v[0].LastFetchedAt != nil
	})
	srcs := k.waitProcessed(col)
	var got []string
	for _, s := range srcs {
		got = append(got, strings.TrimPrefix(s.ExternalID, srv.URL))
	}
	if strings.Join(got, ",") != "/,/team,/prices" {
		t.Fatalf("sources %v, want /, /team, /prices (admin refused by robots.txt, maxPages 3)", got)
	}
}

// waitFor waits up to 20 s for cond.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 20 s")
		}
		time.Sleep(20 * time.Millisecond) // polling a condition: the worker signals nothing a test can wait on
	}
}
