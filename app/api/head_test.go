package api

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// Every GET route of the table, and the pages and widget.js beside it,
// answers HEAD with the GET's status and headers and no body; a stream
// (server-sent events) answers HEAD and ends.
func TestHeadOnEveryGetRoute(t *testing.T) {
	e := newTestEnv(t)
	param := regexp.MustCompile(`[:*][A-Za-z]+`)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path string) (*http.Response, []byte) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, e.url+path, nil)
		req.Header.Set("x-api-key", e.key)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var b []byte
		if method == http.MethodHead {
			b, _ = io.ReadAll(resp.Body)
		}
		return resp, b
	}
	paths := []string{"/widget.js", "/", "/login"}
	for _, rt := range e.app.srv.table {
		if rt.method == http.MethodGet {
			paths = append(paths, param.ReplaceAllString(rt.path, "x"))
		}
	}
	for _, p := range paths {
		get, _ := send(http.MethodGet, p)
		head, body := send(http.MethodHead, p)
		if head.StatusCode != get.StatusCode || len(body) != 0 ||
			head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %q %q, GET: %d %q", p, head.StatusCode, head.Header.Get("Content-Type"), body,
				get.StatusCode, get.Header.Get("Content-Type"))
		}
	}
	for _, p := range []string{"/healthz", "/widget.js", "/api/v2/events/stream"} {
		if head, _ := send(http.MethodHead, p); head.StatusCode != 200 {
			t.Errorf("HEAD %s: %d", p, head.StatusCode)
		}
	}
	// A route without GET still refuses HEAD.
	if head, _ := send(http.MethodHead, "/api/v2/auth/login"); head.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("HEAD on a POST-only route: %d", head.StatusCode)
	}
}
