package safehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// MaxRedirects is how many redirects Get follows, each hop guarded.
const MaxRedirects = 5

// Page is a fetched page.
type Page struct {
	URL          string // after redirects
	Status       int
	ContentType  string
	ETag         string
	LastModified string
	Body         []byte
}

// ErrTooLarge is returned (wrapped) when a page passes the byte limit.
var ErrTooLarge = errors.New("answer too large")

// Get fetches rawURL with the headers (If-None-Match, If-Modified-Since
// ...), following up to MaxRedirects redirects, each one through the same
// address rules. A body over limit bytes is an error wrapping ErrTooLarge.
// A 304 is returned as it is, with no body.
func (c *Client) Get(ctx context.Context, rawURL string, header map[string]string, limit int64) (Page, error) {
	for hop := 0; ; hop++ {
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Page{}, errors.New("URL must be an absolute http or https URL")
		}
		if u.User != nil {
			return Page{}, errors.New("URL must not carry credentials")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return Page{}, errors.New("invalid URL")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return Page{}, err
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified && loc != "" {
			resp.Body.Close()
			if hop >= MaxRedirects {
				return Page{}, fmt.Errorf("more than %d redirects", MaxRedirects)
			}
			next, err := u.Parse(loc)
			if err != nil {
				return Page{}, errors.New("bad redirect")
			}
			rawURL = next.String()
			continue
		}
		p := Page{URL: rawURL, Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
			ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
		body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
		resp.Body.Close()
		if err != nil {
			return p, err
		}
		if int64(len(body)) > limit {
			return p, fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
		}
		p.Body = body
		return p, nil
	}
}
