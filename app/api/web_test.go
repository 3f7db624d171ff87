package api

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The dashboard's pages are served by the binary beside the API, outside
// the OpenAPI document; a session from the sign-in page works on /v2 and
// never on /v1.
func TestDashboardBesideTheAPI(t *testing.T) {
	e := newTestEnv(t)
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if code := e.doJSON("GET", "/api/openapi.json", "", nil, &doc); code != 200 {
		t.Fatalf("openapi: %d", code)
	}
	for p := range doc.Paths {
		if !strings.HasPrefix(p, "/api/") && p != "/healthz" && p != "/mcp" { // /mcp: the MCP endpoint
			t.Errorf("the OpenAPI document lists %s", p)
		}
	}
	for _, rt := range e.app.srv.table {
		if !strings.HasPrefix(rt.path, "/api/") && rt.path != "/healthz" && rt.path != "/mcp" {
			t.Errorf("page route %s %s in the API route table", rt.method, rt.path)
		}
	}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(e.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2F" {
		t.Fatalf("signed out /: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Set the owner's password through the setup page, as a browser would.
	token := e.setupLink[strings.Index(e.setupLink, "token=")+len("token="):]
	req, _ := http.NewRequest("POST", e.url+"/setup", strings.NewReader(url.Values{"token": {token},
		"password": {"a long password"}, "confirm": {"a long password"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("setup: %d cookie %+v", resp.StatusCode, cookie)
	}
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", e.url+path, nil)
		req.AddCookie(cookie)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/api/v2/auth/me"); code != 200 || !strings.Contains(body, "owner@localhost") {
		t.Fatalf("/v2 with the page's session: %d %s", code, body)
	}
	if code, _ := get("/api/v1/agents"); code != 401 {
		t.Fatalf("/v1 with only the cookie: %d", code)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "Calls per hour") {
		t.Fatalf("overview: %d", code)
	}
	// Browsers fetch /favicon.ico on every page, signed in or not.
	if resp, err := http.Get(e.url + "/favicon.ico"); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("favicon: %v %+v", err, resp)
	} else {
		resp.Body.Close()
	}
	if code, _ := get("/nope"); code != 404 {
		t.Fatalf("unknown page: %d", code)
	}
	if strings.Contains(e.logs.String(), token) || strings.Contains(e.logs.String(), cookie.Value) {
		t.Fatal("the setup token or the session id is in the log")
	}
}
