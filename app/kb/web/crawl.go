package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Bounds of one crawl.
const (
	MaxCrawlPages  = 1000
	MinCrawlPace   = 500 * time.Millisecond // between two requests to the site, at least
	maxSitemaps    = 20                     // nested sitemaps read per crawl
	maxRobotsBytes = 512 << 10
)

// Crawl is what to crawl: a start page whose links are followed, or a
// sitemap whose pages are fetched.
type Crawl struct {
	Start    string
	Sitemap  string
	MaxPages int
	SameHost bool
}

// Stats tells how a crawl went.
type Stats struct {
	Fetched, Failed, Skipped int // skipped: refused by robots.txt or another host
}

// Visit is called with each page fetched, or its error; an error it
// returns stops the crawl.
type Visit func(p Page, err error) error

// Run crawls the site politely: robots.txt first (its rules and its
// Crawl-delay, at least pace apart), then the sitemap's pages or the start
// page and its links, breadth first, until MaxPages pages were fetched.
func (c Crawl) Run(ctx context.Context, get Fetch, pace time.Duration, visit Visit) (Stats, error) {
	first := c.Start
	if first == "" {
		first = c.Sitemap
	}
	root, err := url.Parse(first)
	if err != nil || root.Host == "" {
		return Stats{}, errors.New("crawl: no start URL or sitemap")
	}
	limit := c.MaxPages
	if limit <= 0 || limit > MaxCrawlPages {
		limit = MaxCrawlPages
	}
	w := walker{ctx: ctx, get: get, pace: max(pace, MinCrawlPace), host: root.Hostname(), same: c.SameHost}
	robots, err := w.robots(root)
	if err != nil {
		return Stats{}, err
	}
	w.rules = robots
	w.pace = max(w.pace, robots.Delay)

	var queue []string
	if c.Sitemap != "" {
		queue = w.sitemapPages(c.Sitemap)
	} else {
		queue = []string{c.Start}
	}
	seen := map[string]bool{}
	var st Stats
	for len(queue) > 0 && st.Fetched < limit {
		next := queue[0]
		queue = queue[1:]
		key := strings.TrimSuffix(next, "/")
		if seen[key] {
			continue
		}
		seen[key] = true
		if !w.allowed(next) {
			st.Skipped++
			continue
		}
		if err := w.wait(); err != nil {
			return st, err
		}
		p, err := FetchPage(ctx, get, next, Validators{})
		if err != nil {
			st.Failed++
		} else {
			st.Fetched++
			if c.Sitemap == "" && p.html != nil {
				queue = append(queue, Links(p.html, p.URL)...)
			}
		}
		if verr := visit(p, err); verr != nil {
			return st, verr
		}
	}
	return st, nil
}

type walker struct {
	ctx   context.Context
	get   Fetch
	pace  time.Duration
	host  string
	same  bool
	rules Robots
	last  time.Time
}

// wait keeps requests pace apart.
func (w *walker) wait() error {
	if !w.last.IsZero() {
		t := time.NewTimer(time.Until(w.last.Add(w.pace)))
		select {
		case <-w.ctx.Done():
			t.Stop()
			return w.ctx.Err()
		case <-t.C:
		}
	}
	w.last = time.Now()
	return nil
}

func (w *walker) allowed(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if w.same && !strings.EqualFold(u.Hostname(), w.host) {
		return false
	}
	if !strings.EqualFold(u.Hostname(), w.host) {
		return true // another host's robots.txt is not read: sameHost keeps a crawl on one site
	}
	return w.rules.Allowed(u.RequestURI())
}

// robots reads the site's robots.txt: none (4xx) allows everything; a
// server error refuses the whole crawl (RFC 9309 2.3.1.4).
func (w *walker) robots(root *url.URL) (Robots, error) {
	u := url.URL{Scheme: root.Scheme, Host: root.Host, Path: "/robots.txt"}
	r, err := w.get(w.ctx, u.String(), map[string]string{"User-Agent": UserAgent}, maxRobotsBytes)
	w.last = time.Now()
	switch {
	case err != nil:
		return Robots{}, fmt.Errorf("%w: robots.txt: %v", ErrFetch, err)
	case r.Status >= 500:
		return Robots{}, fmt.Errorf("%w: robots.txt answered HTTP %d", ErrFetch, r.Status)
	case r.Status != 200:
		return Robots{}, nil
	}
	return ParseRobots(r.Body), nil
}

// sitemapPages reads a sitemap and, for an index, its nested sitemaps.
func (w *walker) sitemapPages(first string) []string {
	var pages []string
	maps := []string{first}
	for i := 0; i < len(maps) && i < maxSitemaps; i++ {
		if w.wait() != nil {
			break
		}
		r, err := w.get(w.ctx, maps[i], map[string]string{"User-Agent": UserAgent}, MaxPageBytes)
		if err != nil || r.Status != 200 {
			continue
		}
		sm := ParseSitemap(r.Body)
		pages = append(pages, sm.Pages...)
		maps = append(maps, sm.Maps...)
	}
	return pages
}
