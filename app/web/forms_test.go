package web

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
	"github.com/agentd/agentd/storage/kbstore"
)

// The agent form creates and edits voice and chat agents, shows a refusal
// next to what was typed, and manages the agent's jobs.
func TestAgentAndJobForms(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	code, body, _ := e.post(owner, "/agents", url.Values{"name": {"Ava"}, "type": {"voice"}, "status": {"active"},
		"phones": {"+1555000111"}, "speed": {"9"}, "theme": {"ignored for voice"}})
	if code != 400 || !strings.Contains(body, "config.speed") || !strings.Contains(body, `value="Ava"`) {
		t.Fatalf("bad speed: %d %.400s", code, body)
	}
	code, _, h := e.post(owner, "/agents", url.Values{"name": {"Ava"}, "type": {"voice"}, "status": {"active"},
		"phones": {"+15550001111\n+15550002222"}, "voice": {"alloy"}, "speed": {"1.2"}, "instructions": {"Be brief."}})
	if code != http.StatusSeeOther {
		t.Fatalf("create voice agent: %d", code)
	}
	id := strings.TrimPrefix(strings.Split(h.Get("Location"), "?")[0], "/agents/")
	a, err := e.db.Agents.GetAgent(context.Background(), owner.orgID, id)
	if err != nil || a.Type != "voice" || len(a.PhoneNumbers) != 2 || string(a.Config) != `{"speed":1.2,"voice":"alloy"}` {
		t.Fatalf("stored agent %+v %s: %v", a, a.Config, err)
	}
	code, _, _ = e.post(owner, "/agents/"+id, url.Values{"name": {"Ava chat"}, "type": {"chat"}, "status": {"deployed"},
		"primaryColor": {"#112233"}, "position": {"top-left"}, "allowedDomains": {"example.com, shop.example.com"}})
	if code != http.StatusSeeOther {
		t.Fatalf("edit to chat: %d", code)
	}
	if _, body, _ := e.get(owner, "/agents/"+id); !strings.Contains(body, `value="#112233"`) || !strings.Contains(body, "example.com, shop.example.com") {
		t.Fatalf("edited agent form: %.2000s", body)
	}
	if code, _, _ := e.post(owner, "/agents/"+id+"/jobs", url.Values{"name": {"Follow up leads"}, "status": {"active"},
		"triggerType": {"schedule"}, "trustLevel": {"supervised"}}); code != http.StatusSeeOther {
		t.Fatalf("create job: %d", code)
	}
	jobs, _ := e.db.Agents.ListJobs(context.Background(), owner.orgID, id)
	if len(jobs) != 1 || jobs[0].TriggerType != "schedule" {
		t.Fatalf("jobs %+v", jobs)
	}
	if code, _, _ := e.post(owner, "/jobs/"+jobs[0].ID, url.Values{"status": {"paused"}, "triggerType": {"webhook"},
		"trustLevel": {"autonomous"}}); code != http.StatusSeeOther {
		t.Fatalf("update job: %d", code)
	}
	if j, _ := e.db.Agents.GetJob(context.Background(), owner.orgID, jobs[0].ID); j.Status != "paused" || j.TrustLevel != "autonomous" {
		t.Fatalf("job after edit %+v", j)
	}
	if code, _, _ := e.post(owner, "/jobs/"+jobs[0].ID+"/delete", nil); code != http.StatusSeeOther {
		t.Fatalf("delete job: %d", code)
	}
	if code, _, _ := e.post(owner, "/agents/"+id+"/delete", nil); code != http.StatusSeeOther {
		t.Fatalf("delete agent: %d", code)
	}
}

// A key is shown once, on the answer that created it; revoking it shows.
func TestKeyShownOnceAndRevoked(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	code, body, _ := e.post(owner, "/keys", url.Values{"name": {"crm"}, "expires": {"90"}})
	secret := regexp1(body, `value="(agd_[0-9A-Za-z]{40})"`)
	if code != 201 || secret == "" || !strings.Contains(body, "shown this once") {
		t.Fatalf("create key: %d %.500s", code, body)
	}
	_, list, _ := e.get(owner, "/keys")
	if strings.Contains(list, secret) || !strings.Contains(list, secret[:10]) {
		t.Fatal("the key list shows the secret, or not the prefix")
	}
	ks, _ := e.db.Orgs.ListKeys(context.Background(), owner.orgID)
	var id string
	for _, k := range ks {
		if k.Name == "crm" {
			id = k.ID
		}
	}
	if code, _, _ := e.post(owner, "/keys/"+id+"/revoke", nil); code != http.StatusSeeOther {
		t.Fatalf("revoke: %d", code)
	}
	if _, list, _ = e.get(owner, "/keys"); !strings.Contains(list, "st-revoked") {
		t.Fatal("revoked key not shown as revoked")
	}
	if code, body, _ := e.post(owner, "/keys", url.Values{"expires": {"soon"}}); code != 400 || !strings.Contains(body, "expires") {
		t.Fatalf("bad expiry: %d", code)
	}
}

// Members: add, change a role, remove; the owner cannot remove themself.
func TestMemberForms(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	if code, _, _ := e.post(owner, "/members", url.Values{"email": {"m@acme.test"}, "role": {"member"}}); code != http.StatusSeeOther {
		t.Fatalf("add: %d", code)
	}
	m, err := e.db.Orgs.FindUser(context.Background(), owner.orgID, "m@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := e.post(owner, "/members/"+m.ID, url.Values{"role": {"admin"}}); code != http.StatusSeeOther {
		t.Fatalf("change role: %d", code)
	}
	if code, body, _ := e.post(owner, "/members/"+owner.userID+"/remove", nil); code != 409 {
		t.Fatalf("owner removes self: %d %.300s", code, body)
	}
	_, body, _ := e.get(owner, "/members")
	if strings.Contains(body, `action="/members/`+owner.userID+`/remove"`) || !strings.Contains(body, `action="/members/`+m.ID+`/remove"`) {
		t.Fatal("remove buttons: the owner's row has one or the member's has none")
	}
	if code, _, _ := e.post(owner, "/members/"+m.ID+"/remove", nil); code != http.StatusSeeOther {
		t.Fatalf("remove: %d", code)
	}
}

// Knowledge: a collection, a typed and an uploaded Markdown source, and the
// playground finds an uploaded chunk with its heading path and ranking.
func TestKnowledgeForms(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	code, _, h := e.post(owner, "/knowledge", url.Values{"name": {"docs"}})
	if code != http.StatusSeeOther {
		t.Fatalf("create collection: %d", code)
	}
	col := strings.TrimPrefix(strings.Split(h.Get("Location"), "?")[0], "/knowledge/")
	if code, body, _ := e.post(owner, "/knowledge/"+col+"/sources", url.Values{"externalId": {"faq"}, "title": {"FAQ"}}); code != 400 ||
		!strings.Contains(body, "content") {
		t.Fatalf("empty content: %d", code)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("csrf", owner.csrf)
	fw, _ := mw.CreateFormFile("file", "returns.md")
	io.WriteString(fw, "# Returns\n\n## Refund window\n\nParcels may be returned within thirty days for a full refund.\n")
	mw.Close()
	req := httptest.NewRequest("POST", "/knowledge/"+col+"/sources", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: owner.cookie})
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	// Process the queue the way the server's worker would.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.site.f.KB.Run(ctx) }()
	var srcs []kbstore.Source
	testkit.Eventually(t, 10*time.Second, func() bool {
		srcs, _, _ = e.db.KB.ListSources(context.Background(), col, kbstore.SourceFilter{Limit: 10})
		return len(srcs) == 1 && srcs[0].Status == "completed"
	}, "source not processed: %+v", &srcs)
	cancel()
	<-done
	_, body, _ := e.get(owner, "/knowledge/"+col)
	if !strings.Contains(body, "returns.md") || !strings.Contains(body, "st-completed") {
		t.Fatalf("collection page: %.1500s", body)
	}
	_, body, _ = e.get(owner, "/knowledge/"+col+"/search?q=refund+within+thirty+days&mode=hybrid")
	if !strings.Contains(body, `<div class="path">Returns`) || !strings.Contains(body, "found-") || !regexp.MustCompile(`score [01]\.\d{4}`).MatchString(body) {
		t.Fatalf("playground: %.3000s", body)
	}
	_, body, _ = e.get(owner, "/knowledge/"+col+"/search?q=refund&mode=keyword")
	if !strings.Contains(body, "found-keyword") {
		t.Fatal("keyword mode does not say keyword found the chunk")
	}
	// Any supported file is converted (a CSV becomes a table); an
	// unsupported one is refused on the page, naming the problem.
	for name, want := range map[string]int{"prices.csv": http.StatusSeeOther, "photo.png": http.StatusBadRequest} {
		buf.Reset()
		mw = multipart.NewWriter(&buf)
		mw.WriteField("csrf", owner.csrf)
		fw, _ = mw.CreateFormFile("file", name)
		io.WriteString(fw, map[string]string{"prices.csv": "Service,Price\nCleaning,80\n", "photo.png": "\x89PNG\r\n\x1a\n\x00"}[name])
		mw.Close()
		req = httptest.NewRequest("POST", "/knowledge/"+col+"/sources", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: owner.cookie})
		rec = httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != want || (want == 400 && !strings.Contains(rec.Body.String(), "unsupported file type")) {
			t.Fatalf("%s: %d %.300s", name, rec.Code, rec.Body)
		}
	}
	srcs, _, _ = e.db.KB.ListSources(context.Background(), col, kbstore.SourceFilter{ExternalID: "prices.csv", Limit: 1})
	if len(srcs) != 1 || srcs[0].Title != "prices" {
		t.Fatalf("csv source: %+v", srcs)
	}
}

// Cancel from the call page ends a queued call.
func TestCancelCall(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	a, _ := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: owner.orgID, Name: "A", Type: "voice", Status: "active"})
	if err := e.db.Dashboard.SeedHistory(ctx, []dashstore.HistoryCall{{OrgID: owner.orgID, AgentID: a.ID, Status: "queued", CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	p, _ := e.site.f.Calls.List(ctx, owner.orgID, calls.ListOptions{})
	id := p.Calls[0].ID
	if _, body, _ := e.get(owner, "/calls/"+id); !strings.Contains(body, "Cancel call") {
		t.Fatal("no cancel button on a queued call")
	}
	if code, _, _ := e.post(owner, "/calls/"+id+"/cancel", nil); code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", code)
	}
	_, body, _ := e.get(owner, "/calls/"+id)
	if strings.Contains(body, "Cancel call") || !strings.Contains(body, "st-cancelled") {
		t.Fatal("cancelled call still offers cancel")
	}
	if code, _, _ := e.post(owner, "/calls/"+id+"/cancel", nil); code != 409 {
		t.Fatalf("cancel twice: %d", code)
	}
}

func regexp1(s, pattern string) string {
	m := regexpMust(pattern).FindStringSubmatch(s)
	if len(m) < 2 {
		return ""
	}
	return m[1]
}
