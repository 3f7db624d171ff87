package web

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/dnc"
)

// postFile sends a multipart form with one file as m.
func (e *siteEnv) postFile(m member, path, field, name, content string, fields url.Values) (int, string) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("csrf", m.csrf)
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile(field, name)
	io.WriteString(fw, content)
	mw.Close()
	req := httptest.NewRequest("POST", path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: m.cookie})
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// The do-not-call page adds, imports, searches and removes numbers; bad
// numbers are refused and change nothing; a viewer only reads; another
// organization's list is its own.
func TestDNCPage(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	if code, _, _ := e.post(owner, "/dnc", url.Values{"numbers": {"+14155550100, +14155550101"}, "reason": {"asked"}}); code != http.StatusSeeOther {
		t.Fatalf("add: %d", code)
	}
	if code, body, _ := e.post(owner, "/dnc", url.Values{"numbers": {"+14155550102\nnope"}}); code != 400 || !strings.Contains(body, "not an E.164") {
		t.Fatalf("bad number: %d", code)
	}
	code, body := e.postFile(owner, "/dnc/import", "file", "dnc.csv", "phone,reason\n+14155550103,moved\nbad\n+14155550104,\n", url.Values{"reason": {"imported"}})
	if code != 200 || !strings.Contains(body, "line 3") || !strings.Contains(body, "2 added") {
		t.Fatalf("import: %d %.3000s", code, body)
	}
	p, _ := e.site.f.DNC.List(ctx, owner.orgID, dnc.ListOptions{Limit: 10})
	if p.Pagination.Total != 4 {
		t.Fatalf("listed %d, want 4", p.Pagination.Total)
	}
	if _, body, _ := e.get(owner, "/dnc?q=%2B14155550103"); !strings.Contains(body, "moved") || strings.Contains(body, "14155550101</td>") {
		t.Fatalf("search: %.3000s", body)
	}
	if code, _, _ := e.post(owner, "/dnc/remove", url.Values{"numbers": {"+14155550100"}}); code != http.StatusSeeOther {
		t.Fatalf("remove: %d", code)
	}
	if p, _ := e.site.f.DNC.List(ctx, owner.orgID, dnc.ListOptions{Limit: 10}); p.Pagination.Total != 3 {
		t.Fatalf("after remove: %d", p.Pagination.Total)
	}
	viewer := e.add(owner, "v@acme.test", "viewer")
	if _, body, _ := e.get(viewer, "/dnc"); !strings.Contains(body, "14155550101</td>") || strings.Contains(body, `action="/dnc/remove"`) {
		t.Fatal("the viewer does not see the list, or sees its actions")
	}
	if code, _, _ := e.post(viewer, "/dnc", url.Values{"numbers": {"+14155550109"}}); code != 403 {
		t.Fatalf("viewer adds: %d", code)
	}
	other := e.org("globex")
	if _, body, _ := e.get(other, "/dnc"); strings.Contains(body, "14155550101</td>") {
		t.Fatal("another organization sees the list")
	}
	if code, _, _ := e.post(other, "/dnc/remove", url.Values{"numbers": {"+14155550101"}}); code != http.StatusSeeOther {
		t.Fatalf("other org remove: %d", code)
	}
	if p, _ := e.site.f.DNC.List(ctx, owner.orgID, dnc.ListOptions{Limit: 10}); p.Pagination.Total != 3 {
		t.Fatal("another organization removed a number of ours")
	}
}

// Calling hours: saved from the form, refused with the field named when
// wrong (nothing saved), read-only for a role without settings:manage.
func TestCallingHoursPage(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	form := url.Values{"enabled": {"on"}, "start": {"09:00"}, "end": {"18:30"}, "timezone": {"Europe/Paris"}, "days": {"1", "2", "3", "4", "5"}}
	if code, body, _ := e.post(owner, "/settings", form); code != http.StatusSeeOther {
		t.Fatalf("save: %d %.500s", code, body)
	}
	st, _ := e.site.f.Settings.Get(ctx, owner.orgID)
	if h := st.CallingHours; !h.Enabled || h.Start != "09:00" || h.End != "18:30" || h.DefaultTimezone != "Europe/Paris" || len(h.Days) != 5 {
		t.Fatalf("saved %+v", h)
	}
	if _, body, _ := e.get(owner, "/settings"); !strings.Contains(body, `value="18:30"`) || !strings.Contains(body, `value="5" checked`) ||
		strings.Contains(body, `value="0" checked`) {
		t.Fatalf("form: %.3000s", body)
	}
	bad := cloneForm(form)
	bad.Set("timezone", "Mars/Olympus")
	if code, body, _ := e.post(owner, "/settings", bad); code != 400 || !strings.Contains(body, "callingHours.defaultTimezone") {
		t.Fatalf("bad zone: %d %.300s", code, body)
	}
	if st, _ := e.site.f.Settings.Get(ctx, owner.orgID); st.CallingHours.DefaultTimezone != "Europe/Paris" {
		t.Fatal("a refused form changed the settings")
	}
	member := e.add(owner, "m@acme.test", "member")
	if code, _, _ := e.post(member, "/settings", form); code != 403 {
		t.Fatalf("member saves settings: %d", code)
	}
	if _, body, _ := e.get(member, "/settings"); !strings.Contains(body, "<fieldset disabled>") {
		t.Fatal("the form is not read-only for a member")
	}
	other := e.org("globex")
	if _, body, _ := e.get(other, "/settings"); strings.Contains(body, "Europe/Paris") {
		t.Fatal("another organization sees our calling hours")
	}
}
