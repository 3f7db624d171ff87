package kb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/app/kb/convert"
	"github.com/agentd/agentd/app/kb/web"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Bounds of web sources.
const (
	DefaultMinRefresh = 15 * time.Minute // the shortest refreshInterval taken (Config.MinRefresh)
	MaxRefresh        = 365 * 24 * time.Hour
	DefaultCrawlPages = 50
	PageFetchTimeout  = 30 * time.Second
	webLease          = 15 * time.Minute // a crawl of MaxCrawlPages at the minimum pace fits in it
	webPoll           = 30 * time.Second
)

// CrawlInput is a crawl of a site: from a start page (its links are
// followed) or a sitemap.
type CrawlInput struct {
	StartURL string `json:"startUrl"`
	Sitemap  string `json:"sitemap"`
	MaxPages int    `json:"maxPages"`
	SameHost *bool  `json:"sameHost"`
}

// URLInput is a source fetched from the web: {url} for one page, with
// crawl for a site. refreshInterval ("6h", or seconds) fetches it again
// that often; without it the page is fetched once.
type URLInput struct {
	CollectionID    string          `json:"collectionId"`
	URL             string          `json:"url"`
	ExternalID      *string         `json:"externalId"`
	Title           *string         `json:"title"`
	Metadata        map[string]any  `json:"metadata"`
	RefreshInterval json.RawMessage `json:"refreshInterval"`
	Crawl           *CrawlInput     `json:"crawl"`
}

// WebView is a web source as the API shows it.
type WebView struct {
	ID              string          `json:"id"`
	CollectionID    string          `json:"collectionId"`
	Kind            string          `json:"kind"`
	URL             string          `json:"url"`
	ExternalID      string          `json:"externalId"`
	RefreshInterval *string         `json:"refreshInterval"`
	Crawl           json.RawMessage `json:"crawl"`
	LastFetchedAt   *string         `json:"lastFetchedAt"`
	LastError       *string         `json:"lastError"`
	Pages           int             `json:"pages"`
	NextFetchAt     *string         `json:"nextFetchAt"`
	CreatedAt       string          `json:"createdAt"`
}

func webView(w kbstore.WebSource) WebView {
	v := WebView{ID: w.ID, CollectionID: w.CollectionID, Kind: w.Kind, URL: w.URL, ExternalID: w.ExternalID,
		Crawl: json.RawMessage(w.Crawl), LastError: w.LastError, Pages: w.Pages, CreatedAt: apitime.Format(w.CreatedAt),
		LastFetchedAt: timePtr(w.LastFetchedAt), NextFetchAt: timePtr(w.NextFetchAt)}
	if w.Refresh > 0 {
		r := w.Refresh.String()
		v.RefreshInterval = &r
	}
	if len(v.Crawl) == 0 {
		v.Crawl = json.RawMessage("null")
	}
	return v
}

func timePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := apitime.Format(*t)
	return &s
}

// parseRefresh reads "6h", "90m" or a number of seconds.
func (s *Service) parseRefresh(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var d time.Duration
	var str string
	var secs float64
	switch {
	case json.Unmarshal(raw, &secs) == nil:
		d = time.Duration(secs * float64(time.Second))
	case json.Unmarshal(raw, &str) == nil:
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(str)); err != nil {
			return 0, invalid("refreshInterval", `refreshInterval must be a duration such as "6h" or a number of seconds`)
		}
	default:
		return 0, invalid("refreshInterval", `refreshInterval must be a duration such as "6h" or a number of seconds`)
	}
	min := s.cfg.MinRefresh
	if min <= 0 {
		min = DefaultMinRefresh
	}
	if d < min || d > MaxRefresh {
		return 0, invalid("refreshInterval", fmt.Sprintf("refreshInterval must be between %s and %s", min, MaxRefresh))
	}
	return d, nil
}

// AddURL fetches a page now and stores it as a source (refreshed every
// refreshInterval, if given), or queues a crawl of a site.
func (s *Service) AddURL(ctx context.Context, orgID string, in URLInput) (UpsertResult, error) {
	if s.cfg.Fetch == nil {
		return UpsertResult{}, &errs.Error{Kind: errs.Unavailable, Message: "web sources are not enabled on this server"}
	}
	refresh, err := s.parseRefresh(in.RefreshInterval)
	if err != nil {
		return UpsertResult{}, err
	}
	meta, err := marshal(orEmpty(in.Metadata))
	if err != nil {
		return UpsertResult{}, invalid("metadata", "metadata must be a JSON object")
	}
	if in.Crawl != nil {
		return s.addCrawl(ctx, orgID, in, refresh, meta)
	}
	if err := web.CheckURL(in.URL); err != nil {
		return UpsertResult{}, invalid("url", "url "+err.Error())
	}
	ext := in.URL
	if in.ExternalID != nil && *in.ExternalID != "" {
		ext = *in.ExternalID
	}
	c, err := s.checkCollection(ctx, orgID, in.CollectionID)
	if err != nil {
		return UpsertResult{}, err
	}
	fctx, cancel := context.WithTimeout(ctx, PageFetchTimeout)
	defer cancel()
	p, err := web.FetchPage(fctx, s.cfg.Fetch, in.URL, web.Validators{})
	if err != nil {
		return UpsertResult{}, fetchError(err)
	}
	title := p.Title
	if in.Title != nil && *in.Title != "" {
		title = *in.Title
	}
	res, err := s.UpsertSource(ctx, orgID, SourceInput{CollectionID: c.ID, ExternalID: &ext, Title: &title, Content: &p.Markdown, Metadata: in.Metadata})
	if err != nil {
		return UpsertResult{}, err
	}
	now := time.Now()
	w := kbstore.WebSource{OrgID: orgID, CollectionID: c.ID, Kind: kbstore.WebPage, URL: in.URL, ExternalID: ext,
		Metadata: meta, Refresh: refresh, LastFetchedAt: &now, Pages: 1}
	if in.Title != nil {
		w.Title = *in.Title
	}
	if refresh > 0 {
		next := now.Add(refresh)
		w.NextFetchAt = &next
	}
	saved, err := s.db.KB.SaveWeb(ctx, w)
	if err != nil {
		return UpsertResult{}, err
	}
	if err := s.db.KB.FinishWebValidators(ctx, saved.ID, p.Validators.ETag, p.Validators.LastModified); err != nil {
		return UpsertResult{}, err
	}
	if refresh > 0 {
		s.wakeWeb() // an idle worker may sleep past the first refresh
	}
	return res, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// fetchError maps a failed first fetch to a clear answer: the guard's
// refusal and a page the site does not serve are the caller's to fix (400);
// a site that does not answer is a 502.
func fetchError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "address not allowed"):
		return invalid("url", "url points to an address agentd does not fetch (private, loopback or metadata)")
	case errors.Is(err, context.DeadlineExceeded):
		return &errs.Error{Kind: errs.GatewayTimeout, Message: "fetching the url timed out", Err: err}
	case errors.Is(err, convert.ErrTooLarge), errors.Is(err, convert.ErrUnsupported), errors.Is(err, convert.ErrEmpty):
		return invalid("url", "url: "+msg)
	case strings.Contains(msg, ": HTTP "):
		return invalid("url", "fetching the url failed: "+msg[strings.Index(msg, "HTTP "):])
	}
	return &errs.Error{Kind: errs.BadGateway, Message: "fetching the url failed: the site did not answer", Err: err}
}

func (s *Service) addCrawl(ctx context.Context, orgID string, in URLInput, refresh time.Duration, meta []byte) (UpsertResult, error) {
	cr := *in.Crawl
	if cr.StartURL == "" && cr.Sitemap == "" {
		cr.StartURL = in.URL
	}
	switch {
	case cr.StartURL != "" && cr.Sitemap != "":
		return UpsertResult{}, invalid("crawl", "crawl takes a startUrl or a sitemap, not both")
	case cr.StartURL == "" && cr.Sitemap == "":
		return UpsertResult{}, invalid("crawl.startUrl", "crawl needs a startUrl (or url) or a sitemap")
	}
	field, start := "crawl.startUrl", cr.StartURL
	if cr.Sitemap != "" {
		field, start = "crawl.sitemap", cr.Sitemap
	}
	if err := web.CheckURL(start); err != nil {
		return UpsertResult{}, invalid(field, field+" "+err.Error())
	}
	if cr.MaxPages == 0 {
		cr.MaxPages = DefaultCrawlPages
	}
	if cr.MaxPages < 1 || cr.MaxPages > web.MaxCrawlPages {
		return UpsertResult{}, invalid("crawl.maxPages", fmt.Sprintf("crawl.maxPages must be 1 to %d", web.MaxCrawlPages))
	}
	if cr.SameHost == nil {
		t := true
		cr.SameHost = &t
	}
	c, err := s.checkCollection(ctx, orgID, in.CollectionID)
	if err != nil {
		return UpsertResult{}, err
	}
	spec, _ := json.Marshal(cr)
	now := time.Now()
	w, err := s.db.KB.SaveWeb(ctx, kbstore.WebSource{OrgID: orgID, CollectionID: c.ID, Kind: kbstore.WebCrawl, URL: start,
		ExternalID: start, Metadata: meta, Refresh: refresh, Crawl: spec, NextFetchAt: &now})
	if err != nil {
		return UpsertResult{}, err
	}
	s.wakeWeb()
	return UpsertResult{DocumentID: w.ID, ExternalID: start, Status: StatusProcessing,
		Message: fmt.Sprintf("Crawl queued: at most %d pages; see GET /api/v1/kb/web-sources", cr.MaxPages)}, nil
}

// ListWeb lists a collection's web sources.
func (s *Service) ListWeb(ctx context.Context, orgID, collectionID string) ([]WebView, error) {
	c, err := s.checkCollection(ctx, orgID, collectionID)
	if err != nil {
		return nil, err
	}
	ws, err := s.db.KB.ListWeb(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	out := make([]WebView, 0, len(ws))
	for _, w := range ws {
		out = append(out, webView(w))
	}
	return out, nil
}

// DeleteWeb stops refreshing a web source (its sources stay).
func (s *Service) DeleteWeb(ctx context.Context, orgID, id string) error {
	err := s.db.KB.DeleteWeb(ctx, orgID, id)
	if errors.Is(err, sqldb.ErrNotFound) {
		return errs.Wrap(errs.NotFound, "web source not found", err)
	}
	return err
}
