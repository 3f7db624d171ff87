package safehttp

import (
	"io"
	"net/http"
	"strings"
)

// HTTPClient is an *http.Client through the guard for a protocol client
// that makes its own requests (an MCP transport): it sets header on every
// request, follows no redirect, and ends a response body that is not an
// event stream after maxBody bytes (an event stream is long-lived; its
// reader bounds each event).
func (c *Client) HTTPClient(header map[string]string, maxBody int64) *http.Client {
	return &http.Client{
		Transport:     &headerTransport{base: c.http.Transport, header: header, maxBody: maxBody},
		CheckRedirect: c.http.CheckRedirect,
	}
}

type headerTransport struct {
	base    http.RoundTripper
	header  map[string]string
	maxBody int64
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.header) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.header {
			r.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || t.maxBody <= 0 || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.maxBody}
	return resp, nil
}

// limitedBody fails the read past its bound rather than truncate, so a
// cut answer is never mistaken for a whole one.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 && err == io.EOF {
			return 0, io.EOF
		}
		return 0, ErrTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
