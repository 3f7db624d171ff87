package kb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/app/kb/web"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/google/uuid"
)

func (s *Service) wakeWeb() {
	select {
	case s.web <- struct{}{}:
	default:
	}
}

// RunWeb fetches the web sources that are due, one at a time per process
// (claims with a lease, so processes never fetch the same one), until ctx
// ends: a page again conditionally (re-embedded only when its content
// hash changed), a crawl again whole.
func (s *Service) RunWeb(ctx context.Context) error {
	if s.cfg.Fetch == nil {
		return nil
	}
	owner := "web-" + uuid.NewString()
	for {
		w, ok, next, err := s.db.KB.ClaimWeb(ctx, owner, webLease)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("web sources: claim failed", "err", err)
		}
		if ok {
			s.fetchWeb(ctx, owner, w)
			continue
		}
		wait := webPoll
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next), 10*time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-s.web:
			t.Stop()
		case <-t.C:
		}
	}
}

func (s *Service) fetchWeb(ctx context.Context, owner string, w kbstore.WebSource) {
	var f kbstore.WebFetched
	if w.Kind == kbstore.WebCrawl {
		f = s.crawl(ctx, w)
	} else {
		f = s.refreshPage(ctx, w)
	}
	if ctx.Err() != nil {
		return // the lease runs out and another start takes it over
	}
	f.At = time.Now()
	if err := s.db.KB.FinishWeb(context.WithoutCancel(ctx), w.ID, owner, f); err != nil {
		s.log.Warn("web sources: recording a fetch failed", "id", w.ID, "err", err)
	}
}

func (s *Service) refreshPage(ctx context.Context, w kbstore.WebSource) kbstore.WebFetched {
	f := kbstore.WebFetched{ETag: w.ETag, LastModified: w.LastModified, Pages: w.Pages}
	fctx, cancel := context.WithTimeout(ctx, PageFetchTimeout)
	defer cancel()
	p, err := web.FetchPage(fctx, s.cfg.Fetch, w.URL, web.Validators{ETag: w.ETag, LastModified: w.LastModified})
	if err != nil {
		f.Error = err.Error()
		return f
	}
	if p.NotModified {
		return f
	}
	f.ETag, f.LastModified, f.Pages = p.Validators.ETag, p.Validators.LastModified, 1
	if err := s.storePage(ctx, w, w.ExternalID, p); err != nil {
		f.Error = err.Error()
	}
	return f
}

// storePage writes a fetched page as the source ext; an unchanged page is
// left as it is by the hash dedupe.
func (s *Service) storePage(ctx context.Context, w kbstore.WebSource, ext string, p web.Page) error {
	title := p.Title
	if w.Title != "" && ext == w.ExternalID {
		title = w.Title
	}
	if title == "" {
		title = p.URL
	}
	var meta map[string]any
	_ = json.Unmarshal(w.Metadata, &meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["sourceUrl"] = p.URL
	_, err := s.UpsertSource(ctx, w.OrgID, SourceInput{CollectionID: w.CollectionID, ExternalID: &ext, Title: &title,
		Content: &p.Markdown, Metadata: meta})
	return err
}

func (s *Service) crawl(ctx context.Context, w kbstore.WebSource) kbstore.WebFetched {
	var in CrawlInput
	if err := json.Unmarshal(w.Crawl, &in); err != nil {
		return kbstore.WebFetched{Error: "crawl settings unreadable: " + err.Error()}
	}
	spec := web.Crawl{Start: in.StartURL, Sitemap: in.Sitemap, MaxPages: in.MaxPages, SameHost: in.SameHost == nil || *in.SameHost}
	var lastErr string
	st, err := spec.Run(ctx, s.cfg.Fetch, s.cfg.WebPace, func(p web.Page, err error) error {
		if err != nil {
			lastErr = fmt.Sprintf("%s: %v", p.URL, err)
			return nil
		}
		if err := s.storePage(ctx, w, p.URL, p); err != nil {
			lastErr = fmt.Sprintf("%s: %v", p.URL, err)
		}
		return nil
	})
	f := kbstore.WebFetched{Pages: st.Fetched}
	switch {
	case err != nil:
		f.Error = err.Error()
	case st.Fetched == 0 && lastErr != "":
		f.Error = "no page fetched; last error: " + lastErr
	case lastErr != "":
		f.Error = fmt.Sprintf("%d of %d pages failed; last: %s", st.Failed, st.Fetched+st.Failed, lastErr)
	}
	return f
}
