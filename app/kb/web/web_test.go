package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/app/kb/web"
	"github.com/agentd/agentd/internal/safehttp"
)

// guarded is the fetcher the server uses: the forgery guard's Get (test
// servers are on loopback, so private addresses are allowed here).
func guarded() web.Fetch {
	c := safehttp.New(safehttp.Options{AllowPrivate: true})
	return func(ctx context.Context, url string, h map[string]string, limit int64) (web.Response, error) {
		p, err := c.Get(ctx, url, h, limit)
		return web.Response{URL: p.URL, Status: p.Status, ContentType: p.ContentType, ETag: p.ETag,
			LastModified: p.LastModified, Body: p.Body}, err
	}
}

// site is a small site: a home page linking to pages, one of them
// forbidden by robots.txt, one on another host, one a 404.
type site struct {
	mu   sync.Mutex
	hits map[string]int
	srv  *httptest.Server
}

func newSite(t *testing.T, robots string) *site {
	s := &site{hits: map[string]int{}}
	mux := http.NewServeMux()
	page := func(title, body string, links ...string) string {
		var a strings.Builder
		for _, l := range links {
			fmt.Fprintf(&a, `<a href="%s">%s</a> `, l, l)
		}
		return "<html><head><title>" + title + "</title></head><body><nav>menu</nav><h1>" + title + "</h1><p>" + body + "</p>" + a.String() + "</body></html>"
	}
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, robots) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, page("Home", "Welcome.", "/a", "/private/b", "/c#top", "http://other.example/x", "/missing", "/a"))
		case "/a":
			fmt.Fprint(w, page("Page A", "Alpha text.", "/c"))
		case "/c":
			fmt.Fprint(w, page("Page C", "Gamma text.", "/d"))
		case "/d":
			fmt.Fprint(w, page("Page D", "Delta text."))
		case "/private/b":
			fmt.Fprint(w, page("Secret", "Never fetched."))
		case "/sitemap.xml":
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%[1]s/d</loc></url><url><loc>%[1]s/private/b</loc></url></urlset>`, s.srv.URL)
		default:
			http.NotFound(w, r)
		}
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func TestCrawlHonoursRobotsAndMaxPages(t *testing.T) {
	s := newSite(t, "User-agent: *\nDisallow: /private\n")
	var got []string
	st, err := web.Crawl{Start: s.srv.URL + "/", MaxPages: 3, SameHost: true}.Run(context.Background(), guarded(), 0,
		func(p web.Page, err error) error {
			if err == nil {
				got = append(got, p.Title)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Home", "Page A", "Page C"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pages %v, want %v (stats %+v)", got, want, st)
	}
	if s.hits["/private/b"] != 0 {
		t.Fatal("robots.txt ignored: /private/b fetched")
	}
	if s.hits["/d"] != 0 {
		t.Fatal("maxPages ignored: /d fetched")
	}
	if st.Skipped < 1 { // /private/b
		t.Fatalf("stats %+v", st)
	}
}

func TestCrawlPaceAndSitemap(t *testing.T) {
	s := newSite(t, "User-agent: agentd\nDisallow: /private/\nCrawl-delay: 0.6\n\nUser-agent: *\nDisallow: /\n")
	start := time.Now()
	var got []string
	_, err := web.Crawl{Sitemap: s.srv.URL + "/sitemap.xml", MaxPages: 10, SameHost: true}.Run(context.Background(), guarded(), 0,
		func(p web.Page, err error) error {
			if err == nil {
				got = append(got, p.Title)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "Page D" {
		t.Fatalf("pages %v, want [Page D] (the agentd group allows /d, refuses /private/)", got)
	}
	// robots.txt, the sitemap and /d: two gaps of at least the crawl delay.
	if el := time.Since(start); el < 1200*time.Millisecond {
		t.Fatalf("crawl took %v: Crawl-delay 0.6 s not kept", el)
	}
}

func TestFetchPageConditional(t *testing.T) {
	etag := `"v1"`
	body := "<html><head><title>Hours</title></head><body><h1>Hours</h1><table><tr><th>Day</th><th>Open</th></tr><tr><td>Mon</td><td>8-17</td></tr></table></body></html>"
	var conditional int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == etag {
			conditional++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	p, err := web.FetchPage(context.Background(), guarded(), srv.URL+"/hours", web.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Hours" || !strings.Contains(p.Markdown, "| Mon | 8-17 |") || p.Validators.ETag != etag {
		t.Fatalf("page %+v", p)
	}
	p2, err := web.FetchPage(context.Background(), guarded(), srv.URL+"/hours", p.Validators)
	if err != nil || !p2.NotModified || conditional != 1 {
		t.Fatalf("second fetch: %+v %v (conditional %d)", p2, err, conditional)
	}
}

func TestFetchRefusesPrivateAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hi") }))
	defer srv.Close()
	c := safehttp.New(safehttp.Options{})
	fetch := func(ctx context.Context, url string, h map[string]string, limit int64) (web.Response, error) {
		p, err := c.Get(ctx, url, h, limit)
		return web.Response{Status: p.Status, Body: p.Body}, err
	}
	if _, err := web.FetchPage(context.Background(), fetch, srv.URL, web.Validators{}); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("loopback page fetched: %v", err)
	}
}
