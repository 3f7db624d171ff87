package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentd/agentd/app/kb/convert"
)

// MaxPageBytes bounds one fetched page or file.
const MaxPageBytes = convert.MaxFileBytes

// Response is a fetched URL (the guard's answer, internal/safehttp).
type Response struct {
	URL          string // after redirects
	Status       int
	ContentType  string
	ETag         string
	LastModified string
	Body         []byte
}

// Fetch gets a URL through the forgery guard with the given headers and a
// body limit.
type Fetch func(ctx context.Context, url string, header map[string]string, limit int64) (Response, error)

// Validators are what a previous fetch of a page returned, sent back so an
// unchanged page costs a 304.
type Validators struct {
	ETag, LastModified string
}

// Page is a fetched page converted to Markdown.
type Page struct {
	URL         string
	Title       string
	Markdown    string
	NotModified bool // the server answered 304: nothing else is set but URL
	Validators  Validators
	html        []byte // the page itself when it is HTML (for its links)
}

// ErrFetch is a page that could not be fetched (its status or the
// network); it wraps the detail.
var ErrFetch = errors.New("fetching failed")

// CheckURL refuses what is never fetched: a scheme other than http(s), a
// URL without a host or with credentials in it.
func CheckURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil || u.Host == "":
		return errors.New("must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("must use http or https")
	case u.User != nil:
		return errors.New("must not carry credentials")
	case len(raw) > 2048:
		return errors.New("too long, max 2048 characters")
	}
	return nil
}

// FetchPage gets one page, conditionally when v is set, and converts it.
func FetchPage(ctx context.Context, get Fetch, rawURL string, v Validators) (Page, error) {
	h := map[string]string{"User-Agent": UserAgent + " (knowledge fetcher)", "Accept": "text/html,application/xhtml+xml,text/plain,text/markdown,text/csv,application/pdf,*/*;q=0.5"}
	if v.ETag != "" {
		h["If-None-Match"] = v.ETag
	}
	if v.LastModified != "" {
		h["If-Modified-Since"] = v.LastModified
	}
	r, err := get(ctx, rawURL, h, MaxPageBytes)
	if err != nil {
		return Page{URL: rawURL}, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	p := Page{URL: r.URL, Validators: Validators{ETag: r.ETag, LastModified: r.LastModified}}
	if p.URL == "" {
		p.URL = rawURL
	}
	switch {
	case r.Status == 304:
		p.NotModified = true
		p.Validators = v
		return p, nil
	case r.Status != 200:
		return p, fmt.Errorf("%w: HTTP %d", ErrFetch, r.Status)
	}
	name := pathName(p.URL)
	format := convert.Detect(name, r.ContentType, r.Body)
	md, err := convert.ToMarkdownAt(format, r.Body, p.URL)
	if err != nil {
		return p, err
	}
	p.Markdown = md
	if format == convert.HTML {
		p.Title = convert.Title(r.Body)
		p.html = r.Body
	}
	if p.Title == "" {
		p.Title = firstHeading(md, p.URL)
	}
	return p, nil
}

// pathName is the last segment of a URL's path (its file name, if any).
func pathName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	i := strings.LastIndex(u.Path, "/")
	return u.Path[i+1:]
}

// firstHeading is a Markdown document's first heading, else the URL.
func firstHeading(md, fallback string) string {
	for _, line := range strings.Split(md, "\n") {
		if t := strings.TrimSpace(strings.TrimLeft(line, "#")); strings.HasPrefix(line, "#") && t != "" {
			return t
		}
	}
	return fallback
}
