package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
)

// browser is a cookie-carrying client of the test server, like a dashboard
// page: it sends the session cookie and, once signed in, the CSRF token.
type browser struct {
	e      *testEnv
	cookie string
	csrf   string
}

func (b *browser) do(method, path string, body any, hdr ...string) (int, []byte) {
	b.e.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, b.e.url+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.cookie != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: b.cookie})
	}
	if b.csrf != "" {
		req.Header.Set(csrfHeader, b.csrf)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.e.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			b.cookie = c.Value
		}
	}
	var me struct {
		Data struct {
			CSRFToken string `json:"csrfToken"`
		} `json:"data"`
	}
	if json.Unmarshal(out, &me) == nil && me.Data.CSRFToken != "" {
		b.csrf = me.Data.CSRFToken
	}
	return resp.StatusCode, out
}

// userWithPassword adds a user with a role and a password.
func (e *testEnv) userWithPassword(orgID, email, role, pw string) string {
	e.t.Helper()
	u, err := e.db.Orgs.AddUser(context.Background(), orgID, email, role)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := features.NewAccess(e.db).SetPassword(context.Background(), u.ID, pw); err != nil {
		e.t.Fatal(err)
	}
	return u.ID
}

func TestSetupLinkSignsInOwner(t *testing.T) {
	e := newTestEnv(t)
	u, err := url.Parse(e.setupLink)
	if err != nil || u.Path != "/setup" || len(u.Query().Get("token")) != 43 {
		t.Fatalf("setup link %q", e.setupLink)
	}
	token := u.Query().Get("token")
	b := &browser{e: e}
	if code, body := b.do("POST", "/api/v2/auth/setup", map[string]string{"token": token, "password": "short"}); code != 400 {
		t.Fatalf("short password: %d %s", code, body)
	}
	code, body := b.do("POST", "/api/v2/auth/setup", map[string]string{"token": token, "password": "correct horse battery"})
	if code != 200 || !strings.Contains(string(body), `"role":"owner"`) || b.cookie == "" || b.csrf == "" {
		t.Fatalf("setup: %d %s", code, body)
	}
	if code, body := b.do("GET", "/api/v2/auth/me", nil); code != 200 || !strings.Contains(string(body), `"email":"owner@localhost"`) ||
		!strings.Contains(string(body), `"name":"default"`) {
		t.Fatalf("me: %d %s", code, body)
	}
	// The token is single use.
	other := &browser{e: e}
	if code, _ := other.do("POST", "/api/v2/auth/setup", map[string]string{"token": token, "password": "another good one"}); code != 401 {
		t.Fatalf("reused setup token: %d", code)
	}
	// The password works for sign-in; every sign-in makes a new session id.
	first := b.cookie
	if code, body := b.do("POST", "/api/v2/auth/login", map[string]string{"email": "owner@localhost", "password": "correct horse battery"}); code != 200 {
		t.Fatalf("login: %d %s", code, body)
	}
	if b.cookie == first || b.cookie == "" {
		t.Fatal("sign-in kept the old session id")
	}
	for _, secret := range []string{"correct horse battery", b.cookie, first, token} {
		if strings.Contains(e.logs.String(), secret) {
			t.Fatalf("the log holds a secret %q", secret[:6])
		}
	}
}

func TestSessionRulesOnV1AndV2(t *testing.T) {
	e := newTestEnv(t)
	e.userWithPassword(e.orgID, "ops@example.test", "admin", "admin password 1")
	e.userWithPassword(e.orgID, "view@example.test", "viewer", "viewer password 1")
	admin := &browser{e: e}
	if code, body := admin.do("POST", "/api/v2/auth/login", map[string]string{"email": "ops@example.test", "password": "admin password 1"}); code != 200 {
		t.Fatalf("login: %d %s", code, body)
	}
	// /v1 never takes the session.
	if code, _ := admin.do("GET", "/api/v1/agents", nil); code != 401 {
		t.Fatalf("/v1 with the cookie: %d", code)
	}
	// A write without the CSRF token, or from another site, is refused.
	csrf := admin.csrf
	admin.csrf = ""
	if code, _ := admin.do("POST", "/api/v2/api-keys", map[string]any{"name": "x"}); code != 403 {
		t.Fatalf("no CSRF token: %d", code)
	}
	admin.csrf = csrf
	if code, _ := admin.do("POST", "/api/v2/api-keys", map[string]any{"name": "x"}, "Sec-Fetch-Site", "cross-site"); code != 403 {
		t.Fatalf("cross-site POST: %d", code)
	}
	if code, _ := admin.do("POST", "/api/v2/api-keys", map[string]any{"name": "x"}, "Origin", "https://evil.example"); code != 403 {
		t.Fatalf("foreign Origin: %d", code)
	}
	if code, body := admin.do("POST", "/api/v2/api-keys", map[string]any{"name": "x"}); code != 201 {
		t.Fatalf("same-site POST with token: %d %s", code, body)
	}
	// A viewer's session reads but cannot write.
	viewer := &browser{e: e}
	viewer.do("POST", "/api/v2/auth/login", map[string]string{"email": "view@example.test", "password": "viewer password 1"})
	if code, _ := viewer.do("GET", "/api/v2/agents", nil); code != 200 {
		t.Fatalf("viewer read: %d", code)
	}
	if code, _ := viewer.do("POST", "/api/v2/api-keys", map[string]any{"name": "x"}); code != 403 {
		t.Fatalf("viewer write: %d", code)
	}
	// A role change and a removal take effect on the next request.
	var members struct {
		Data struct {
			Members []struct{ ID, Email, Role, CreatedAt string } `json:"members"`
		} `json:"data"`
	}
	admin.do("GET", "/api/v2/members", nil)
	_, body := admin.do("GET", "/api/v2/members", nil)
	json.Unmarshal(body, &members)
	var viewerID string
	for _, m := range members.Data.Members {
		if m.Email == "view@example.test" {
			viewerID = m.ID
		}
	}
	if code, _ := admin.do("POST", "/api/v2/members", map[string]string{"email": "not an email"}); code != 400 {
		t.Fatalf("add a bad email: %d", code)
	}
	if code, body := admin.do("POST", "/api/v2/members", map[string]string{"email": "new@example.test"}); code != 201 ||
		!strings.Contains(string(body), `"role":"member"`) {
		t.Fatalf("add member: %d %s", code, body)
	}
	if code, _ := admin.do("DELETE", "/api/v2/members/no-such-id", nil); code != 404 {
		t.Fatalf("remove a missing member: %d", code)
	}
	if code, _, _ := e.do("GET", "/api/v2/members", "", nil); code != 401 {
		t.Fatalf("members without credentials: %d", code)
	}
	if code, _, _ := e.do("POST", "/api/v2/auth/logout", e.key, nil); code != 400 {
		t.Fatalf("sign out with an API key: %d", code)
	}
	if code, body := admin.do("PATCH", "/api/v2/members/"+viewerID, map[string]string{"role": "admin"}); code != 200 {
		t.Fatalf("promote: %d %s", code, body)
	}
	if code, _ := viewer.do("POST", "/api/v2/api-keys", map[string]any{"name": "y"}); code != 201 {
		t.Fatalf("promoted viewer write: %d", code)
	}
	if code, _ := admin.do("PATCH", "/api/v2/members/"+viewerID, map[string]string{"role": "owner"}); code != 403 {
		t.Fatalf("an admin made an owner: %d", code)
	}
	if code, _ := admin.do("DELETE", "/api/v2/members/"+viewerID, nil); code != 200 {
		t.Fatalf("remove: %d", code)
	}
	if code, _ := viewer.do("GET", "/api/v2/agents", nil); code != 401 {
		t.Fatalf("removed user's session: %d", code)
	}
}

func TestSignOutEverywhereAndCookieFlags(t *testing.T) {
	e := newTestEnv(t, func(c *serveConfig) { c.PublicURL = "https://agentd.example" })
	e.userWithPassword(e.orgID, "a@example.test", "member", "member password 1")
	// Cookie flags.
	req, _ := http.NewRequest("POST", e.url+"/api/v2/auth/login", strings.NewReader(`{"email":"a@example.test","password":"member password 1"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	set := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"agentd_session=", "HttpOnly", "SameSite=Lax", "Secure", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Fatalf("Set-Cookie %q lacks %s", set, want)
		}
	}
	one, two := &browser{e: e}, &browser{e: e}
	for _, b := range []*browser{one, two} {
		if code, _ := b.do("POST", "/api/v2/auth/login", map[string]string{"email": "a@example.test", "password": "member password 1"}); code != 200 {
			t.Fatal("login")
		}
	}
	if code, body := one.do("POST", "/api/v2/auth/logout", map[string]bool{"everywhere": true}); code != 200 || !strings.Contains(string(body), `"signedOut":3`) {
		t.Fatalf("sign out everywhere: %d %s", code, body)
	}
	for _, b := range []*browser{one, two} {
		if code, _ := b.do("GET", "/api/v2/auth/me", nil); code != 401 {
			t.Fatalf("session alive after sign out everywhere: %d", code)
		}
	}
}

func TestSignInThrottledAndVague(t *testing.T) {
	e := newTestEnv(t)
	e.userWithPassword(e.orgID, "t@example.test", "member", "the right password")
	b := &browser{e: e}
	_, wrongPw := b.do("POST", "/api/v2/auth/login", map[string]string{"email": "t@example.test", "password": "wrong password!"})
	_, wrongEmail := b.do("POST", "/api/v2/auth/login", map[string]string{"email": "nobody@example.test", "password": "wrong password!"})
	msg := func(b []byte) string {
		var v struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(b, &v)
		return v.Error.Message
	}
	if msg(wrongPw) != msg(wrongEmail) || msg(wrongPw) == "" {
		t.Fatalf("the answers differ: %q vs %q", msg(wrongPw), msg(wrongEmail))
	}
	for i := 1; i < access.PairFree; i++ {
		b.do("POST", "/api/v2/auth/login", map[string]string{"email": "t@example.test", "password": "wrong password!"})
	}
	if code, _ := b.do("POST", "/api/v2/auth/login", map[string]string{"email": "t@example.test", "password": "the right password"}); code != 429 {
		t.Fatalf("after %d failures the right password got %d, want 429", access.PairFree, code)
	}
	if strings.Contains(e.logs.String(), "wrong password!") || strings.Contains(e.logs.String(), "the right password") {
		t.Fatal("a password was logged")
	}
}
