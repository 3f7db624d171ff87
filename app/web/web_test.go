package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/dashboard"
	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/app/settings"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
	"github.com/agentd/agentd/storage/orgstore"
)

// siteEnv is the dashboard over a real database, served by a standard
// library mux built from Routes (the server uses its own router).
type siteEnv struct {
	t    testing.TB
	db   *storage.Stores
	site *Site
	h    http.Handler
}

// testExplain maps errors the way the server does, by kind.
func testExplain(err error) (int, string) {
	var e *errs.Error
	if !asErr(err, &e) {
		return 500, "Internal server error"
	}
	st := map[errs.Kind]int{errs.Invalid: 400, errs.NotFound: 404, errs.Conflict: 409, errs.Forbidden: 403,
		errs.Unauthenticated: 401, errs.TooLarge: 413, errs.RateLimited: 429, errs.Unavailable: 503}[e.Kind]
	if st == 0 {
		return 500, "Internal server error"
	}
	return st, e.Message
}

func newSiteEnv(t testing.TB) *siteEnv {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t, dbtest.Path(t, "web.db"))
	log := slog.New(slog.DiscardHandler)
	kbs, err := kb.Open(ctx, kb.Deps{KB: db.KB, Vectors: db.Vectors}, kb.Config{EmbedDims: 64}, log)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := calls.New(calls.Deps{Calls: db.Calls, Agents: db.Agents}, calls.Config{Dialer: "sim"}, log) // not run: calls stay queued
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	svcs := Services{Agents: agents.New(agents.Deps{Agents: db.Agents, KB: db.KB}), DNC: dnc.New(dnc.Deps{Calls: db.Calls}), Settings: settings.New(settings.Deps{Calls: db.Calls}), Calls: cs, KB: kbs, Listings: listings.New(listings.Deps{Listings: db.Listings}, nil), Events: events.New(events.Deps{Webhooks: db.Webhooks, Events: db.Events}, nil),
		Dashboard: dashboard.New(dashboard.Deps{Dashboard: db.Dashboard})}
	site, err := New(Config{Access: features.NewAccess(db), Services: svcs, Log: log, Location: time.UTC, Explain: testExplain})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	param := regexp.MustCompile(`:([a-z]+)`)
	for _, rt := range site.Routes() {
		p := param.ReplaceAllString(rt.Path, "{$1}")
		p = strings.Replace(p, "*file", "{file...}", 1)
		if p == "/" {
			p = "/{$}"
		}
		mux.Handle(rt.Method+" "+p, rt.Handler)
	}
	return &siteEnv{t: t, db: db, site: site, h: mux}
}

// member is a signed-in user of an organization.
type member struct {
	orgID, userID, cookie, csrf string
}

// org creates an organization whose owner is signed in.
func (e *siteEnv) org(name string) member {
	e.t.Helper()
	o, _, _, err := features.NewAccess(e.db).CreateOrg(context.Background(), name, "owner@"+name+".test")
	if err != nil {
		e.t.Fatal(err)
	}
	u, _ := e.db.Orgs.FirstOwner(context.Background(), o.ID)
	return e.signIn(u)
}

// add adds a member with a role and signs them in.
func (e *siteEnv) add(owner member, email, role string) member {
	e.t.Helper()
	u, err := features.NewAccess(e.db).AddMember(context.Background(), access.Actor{UserID: owner.userID, Role: "owner"}, owner.orgID, email, role)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.signIn(u)
}

func (e *siteEnv) signIn(u orgstore.User) member {
	e.t.Helper()
	ctx := context.Background()
	if err := features.NewAccess(e.db).SetPassword(ctx, u.ID, "a long password"); err != nil {
		e.t.Fatal(err)
	}
	st, err := features.NewAccess(e.db).Login(ctx, u.Email, "a long password", u.OrgID, "127.0.0.1", time.Now().UTC())
	if err != nil {
		e.t.Fatal(err)
	}
	return member{orgID: u.OrgID, userID: u.ID, cookie: st.Token, csrf: st.Session.CSRFToken}
}

// get fetches a page as m (signed out when m is zero).
func (e *siteEnv) get(m member, path string) (int, string, http.Header) {
	e.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	if m.cookie != "" {
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: m.cookie})
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b), rec.Header()
}

// post sends a same-origin form as m with its CSRF token (unless the form
// sets csrf itself); hdr adds headers.
func (e *siteEnv) post(m member, path string, form url.Values, hdr ...string) (int, string, http.Header) {
	e.t.Helper()
	form = cloneForm(form)
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", m.csrf)
	}
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if m.cookie != "" {
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: m.cookie})
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b), rec.Header()
}

// Every page answers an owner with HTML and the security headers; a
// signed-out visitor is sent to sign in and comes back after.
func TestPagesRenderAndNeedSignIn(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	a, err := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: owner.orgID, Name: "Ava", Type: "voice", Status: "active",
		PhoneNumbers: []string{"+15550001111"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.Dashboard.SeedHistory(ctx, dashstore.WeekOfCalls(owner.orgID, a.ID, 300, time.Now().UTC())); err != nil {
		t.Fatal(err)
	}
	c, err := e.site.f.KB.CreateCollection(ctx, owner.orgID, "docs", "")
	if err != nil {
		t.Fatal(err)
	}
	page, err := e.site.f.Calls.List(ctx, owner.orgID, calls.ListOptions{Limit: 1})
	if err != nil || len(page.Calls) != 1 {
		t.Fatalf("list: %v", err)
	}
	for _, p := range []string{"/", "/calls", "/calls?status=completed&direction=outbound&from=2020-01-01&to=2099-01-01",
		"/calls/" + page.Calls[0].ID, "/batches", "/agents", "/agents/new", "/agents/" + a.ID, "/knowledge",
		"/knowledge/" + c.ID, "/knowledge/" + c.ID + "/search?q=hello", "/listings", "/keys", "/members"} {
		code, body, h := e.get(owner, p)
		if code != 200 || !strings.Contains(body, "</html>") {
			t.Fatalf("GET %s: %d %.300s", p, code, body)
		}
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET %s: headers %v", p, h)
		}
		code, _, h = e.get(member{}, p)
		if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/login?next=") {
			t.Fatalf("signed out GET %s: %d %s", p, code, h.Get("Location"))
		}
	}
	if code, body, _ := e.get(owner, "/"); code != 200 || !strings.Contains(body, "<svg class=\"chart\"") || !strings.Contains(body, "<title>") {
		t.Fatalf("overview has no chart: %.500s", body)
	}
	if code, body, _ := e.get(owner, "/calls?from=yesterday"); code != 400 || !strings.Contains(body, "from: must be a date") {
		t.Fatalf("bad date filter: %d", code)
	}
	if code, _, _ := e.get(owner, "/static/app.js"); code != 200 {
		t.Fatalf("static: %d", code)
	}
	if code, _, _ := e.get(owner, "/static/"); code != 404 {
		t.Fatalf("static directory listed: %d", code)
	}
}

// A viewer sees no action and is refused every write, even with a valid
// form; a form without the session's token and a cross-site form are
// refused for the owner too.
func TestRolesCSRFAndCrossOrigin(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	viewer := e.add(owner, "v@acme.test", "viewer")
	for _, p := range []string{"/agents", "/knowledge", "/members", "/agents/new"} {
		code, body, _ := e.get(viewer, p)
		for _, action := range []string{"New agent", "Create collection", "Add member", "Create agent"} {
			if strings.Contains(body, action) {
				t.Fatalf("viewer sees %q on %s (%d)", action, p, code)
			}
		}
	}
	if _, body, _ := e.get(viewer, "/"); strings.Contains(body, `href="/keys"`) {
		t.Fatal("viewer sees the API keys page in the menu")
	}
	if code, _, _ := e.get(viewer, "/keys"); code != 403 {
		t.Fatalf("viewer GET /keys: %d", code)
	}
	form := url.Values{"name": {"Forged"}, "type": {"voice"}, "status": {"active"}}
	for _, p := range []string{"/agents", "/knowledge", "/keys", "/members"} {
		if code, _, _ := e.post(viewer, p, form); code != 403 {
			t.Fatalf("viewer forged POST %s: %d", p, code)
		}
	}
	if code, _, _ := e.post(owner, "/agents", url.Values{"name": {"X"}, "type": {"voice"}, "status": {"active"}, "csrf": {"wrong"}}); code != 403 {
		t.Fatalf("bad CSRF token: %d", code)
	}
	if code, _, _ := e.post(owner, "/agents", form, "Sec-Fetch-Site", "cross-site"); code != 403 {
		t.Fatalf("cross-site POST with the owner's cookie: %d", code)
	}
	if code, _, _ := e.post(owner, "/logout", nil, "Origin", "https://evil.example", "Sec-Fetch-Site", ""); code != 403 {
		t.Fatalf("cross-origin sign out: %d", code)
	}
	if as, _, _ := e.db.Agents.ListAgents(context.Background(), owner.orgID, agentstore.AgentFilter{Limit: 10}); len(as) != 0 {
		t.Fatalf("a refused form created %d agents", len(as))
	}
	code, _, h := e.post(owner, "/agents", form)
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/agents/") {
		t.Fatalf("owner creates an agent: %d %s", code, h.Get("Location"))
	}
}

// Every page and action is scoped to the session's organization: another
// organization's call, agent, collection, key and member are not found.
func TestTenantIsolation(t *testing.T) {
	e := newSiteEnv(t)
	ctx := context.Background()
	a := e.org("acme")
	b := e.org("globex")
	ag, _ := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: a.orgID, Name: "Acme agent", Type: "voice", Status: "active"})
	if err := e.db.Dashboard.SeedHistory(ctx, dashstore.WeekOfCalls(a.orgID, ag.ID, 10, time.Now().UTC())); err != nil {
		t.Fatal(err)
	}
	cs, _ := e.site.f.Calls.List(ctx, a.orgID, calls.ListOptions{Limit: 1})
	col, _ := e.site.f.KB.CreateCollection(ctx, a.orgID, "secret", "")
	_, key, _ := features.NewAccess(e.db).CreateKey(ctx, a.orgID, a.userID, access.KeyOptions{Name: "k"})
	for _, p := range []string{"/calls/" + cs.Calls[0].ID, "/agents/" + ag.ID, "/knowledge/" + col.ID, "/knowledge/" + col.ID + "/search?q=x"} {
		if code, body, _ := e.get(b, p); code != 404 || strings.Contains(body, "Acme agent") {
			t.Fatalf("globex GET %s: %d", p, code)
		}
	}
	for _, p := range []string{"/calls/" + cs.Calls[0].ID + "/cancel", "/agents/" + ag.ID + "/delete", "/knowledge/" + col.ID + "/delete",
		"/keys/" + key.ID + "/revoke", "/members/" + a.userID + "/remove"} {
		if code, _, _ := e.post(b, p, nil); code != 404 {
			t.Fatalf("globex POST %s: %d", p, code)
		}
	}
	for _, p := range []string{"/calls", "/agents", "/knowledge", "/keys", "/members", "/batches"} {
		_, body, _ := e.get(b, p)
		for _, leak := range []string{cs.Calls[0].ID, "Acme agent", "secret", "owner@acme.test"} {
			if strings.Contains(body, leak) {
				t.Fatalf("globex %s shows %q", p, leak)
			}
		}
	}
	if _, err := e.db.Agents.GetAgent(ctx, a.orgID, ag.ID); err != nil {
		t.Fatal("acme's agent is gone")
	}
}

func cloneForm(f url.Values) url.Values {
	out := url.Values{}
	for k, v := range f {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func regexpMust(p string) *regexp.Regexp { return regexp.MustCompile(p) }
