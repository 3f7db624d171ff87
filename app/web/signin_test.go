package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// safeNext keeps a sign-in's destination a path on this site (issue 27 item
// 5): /%09/evil.com was answered as Location: /<TAB>/evil.com, which
// Chromium follows to evil.com.
func TestSafeNextOnlyPaths(t *testing.T) {
	for _, bad := range []string{
		"/\t/evil.com", "/\n/evil.com", "/\r/evil.com", "/ /evil.com", "//evil.com", "/\\evil.com", "\\\\evil.com",
		"/\\/evil.com", "https://evil.com", "http:/evil.com", "javascript:alert(1)", "evil.com", "",
		"/%09/evil.com", "/x\x00", "/\x7f/evil.com", "/\u2028/evil.com", "///evil.com", "/.\\evil.com",
	} {
		if got := safeNext(bad); got != "/" {
			t.Errorf("safeNext(%q) = %q, want /", bad, got)
		}
	}
	for _, good := range []string{"/", "/agents", "/agents/ag_1?tab=jobs", "/calls?offset=50#top"} {
		if got := safeNext(good); got != good {
			t.Errorf("safeNext(%q) = %q", good, got)
		}
	}
}

// The sign-in redirect itself, through the handler: a signed-in visitor of
// /login?next=/%09/evil.com is sent home, not off site.
func TestLoginNextStaysOnSite(t *testing.T) {
	e := newSiteEnv(t)
	a := e.org("acme")
	code, _, h := e.get(a, "/login?next=/%09/evil.com")
	if code != 303 || h.Get("Location") != "/" {
		t.Fatalf("GET /login?next=/%%09/evil.com: %d Location %q", code, h.Get("Location"))
	}
}

// The sign-in page (and every page) shows only notices the server chose
// (issue 27 item 10): a link carrying its own ?notice= text shows nothing,
// while the server's own redirect after signing out still shows its notice.
func TestNoticeOnlyFromServer(t *testing.T) {
	e := newSiteEnv(t)
	a := e.org("acme")
	phish := "Your account is locked: call +1 555 0100"
	for _, m := range []member{{}, a} {
		_, body, _ := e.get(m, "/login?notice="+url.QueryEscape(phish))
		if strings.Contains(body, "account is locked") {
			t.Errorf("/login shows a notice from the URL")
		}
	}
	_, body, _ := e.get(a, "/agents?notice="+url.QueryEscape(phish))
	if strings.Contains(body, "account is locked") {
		t.Errorf("/agents shows a notice from the URL")
	}
	code, _, h := e.post(a, "/logout", url.Values{})
	if code != 303 {
		t.Fatalf("logout: %d", code)
	}
	_, body, _ = e.get(member{}, h.Get("Location"))
	if !strings.Contains(body, "Signed out") {
		t.Errorf("the server's own notice is gone: Location %q", h.Get("Location"))
	}
}

// The dashboard applies the owner rule to keys too (issue 27 item 6): an
// admin's revoke form on an owner's key is 403 and the key stays active.
func TestAdminCannotRevokeOwnerKeyInDashboard(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	admin := e.add(owner, "adm@acme.test", "admin")
	ks, _ := e.db.Orgs.ListKeys(context.Background(), owner.orgID)
	if len(ks) == 0 {
		t.Fatal("no owner key")
	}
	if code, _, _ := e.post(admin, "/keys/"+ks[0].ID+"/revoke", nil); code != http.StatusForbidden {
		t.Fatalf("admin revokes the owner's key: %d, want 403", code)
	}
	if ks, _ = e.db.Orgs.ListKeys(context.Background(), owner.orgID); ks[0].RevokedAt != nil {
		t.Fatal("the refused revocation revoked the key")
	}
}
