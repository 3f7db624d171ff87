package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/storage/agentstore"
)

// A campaign from pasted numbers: the dry run lists each number and
// creates nothing; the start creates a named batch whose page shows the
// name, progress and its calls, and pause, resume and cancel act on it.
// A viewer may not start or pause one; another organization sees none.
func TestCampaignFromPastedNumbers(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	a, _ := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: owner.orgID, Name: "Ava", Type: "voice", Status: "active", PhoneNumbers: []string{"+15550001111"}})
	form := url.Values{"name": {"Spring reminders"}, "agentId": {a.ID},
		"numbers": {"+14155550100, Ann\n+14155550101\nnot a number\n\n+14155550102,Bob"}}
	dry := cloneForm(form)
	dry.Set("dryRun", "1")
	code, body, _ := e.post(owner, "/batches", dry)
	if code != 200 || !strings.Contains(body, "data-dry-run") || !strings.Contains(body, "3 of 4 would be called") ||
		!strings.Contains(body, `value="Spring reminders"`) {
		t.Fatalf("dry run: %d %.3000s", code, body)
	}
	if p, _ := e.site.f.Calls.ListBatches(ctx, owner.orgID, calls.BatchListOptions{Limit: 10}); len(p.Batches) != 0 {
		t.Fatalf("the dry run created %d batches", len(p.Batches))
	}
	code, _, h := e.post(owner, "/batches", form)
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/batches/") {
		t.Fatalf("start: %d %v", code, h)
	}
	id := strings.TrimPrefix(strings.Split(h.Get("Location"), "?")[0], "/batches/")
	_, body, _ = e.get(owner, "/batches/"+id)
	if !strings.Contains(body, "<h1>Spring reminders") || strings.Count(body, "<tr data-call=") != 3 || !strings.Contains(body, "/batches/"+id+"/pause") {
		t.Fatalf("campaign page: %.4000s", body)
	}
	if _, body, _ = e.get(owner, "/batches"); !strings.Contains(body, ">Spring reminders</a>") {
		t.Fatalf("batches list lacks the name: %.3000s", body)
	}
	for _, step := range []struct{ action, status string }{{"pause", "paused"}, {"resume", "running"}, {"cancel", "cancelled"}} {
		if code, body, _ := e.post(owner, "/batches/"+id+"/"+step.action, nil); code != http.StatusSeeOther {
			t.Fatalf("%s: %d %.300s", step.action, code, body)
		}
		if b, _ := e.site.f.Calls.GetBatch(ctx, owner.orgID, id); b.Status != step.status {
			t.Fatalf("after %s: %s", step.action, b.Status)
		}
	}
	viewer := e.add(owner, "v@acme.test", "viewer")
	if code, _, _ := e.post(viewer, "/batches", form); code != 403 {
		t.Fatalf("viewer starts a campaign: %d", code)
	}
	if code, _, _ := e.post(viewer, "/batches/"+id+"/pause", nil); code != 403 {
		t.Fatalf("viewer pauses: %d", code)
	}
	if _, body, _ := e.get(viewer, "/batches/"+id); strings.Contains(body, "/pause") || strings.Contains(body, "Cancel campaign") {
		t.Fatal("the viewer sees campaign actions")
	}
	other := e.org("globex")
	if code, _, _ := e.get(other, "/batches/"+id); code != 404 {
		t.Fatalf("another org reads the campaign: %d", code)
	}
	if code, _, _ := e.post(other, "/batches/"+id+"/cancel", nil); code != 404 {
		t.Fatalf("another org cancels: %d", code)
	}
	// The calls of a batch list in the order they were given.
	var nums []string
	for i := range 8 {
		nums = append(nums, "+1415555030"+itoa(i))
	}
	_, _, h = e.post(owner, "/batches", url.Values{"agentId": {a.ID}, "numbers": {strings.Join(nums, "\n")}})
	_, body, _ = e.get(owner, strings.Split(h.Get("Location"), "?")[0])
	if got := regexpMust(`1415555030\d`).FindAllString(body, -1); strings.Join(got, " ") != strings.ReplaceAll(strings.Join(nums, " "), "+", "") {
		t.Fatalf("the campaign lists its calls as %v, given %v", got, nums)
	}
	// A CSV upload with a header, dry run then start.
	csvFile := "name,phone\nAnn,+14155550400\nBob,+14155550401\n"
	if code, body := e.postFile(owner, "/batches", "file", "list.csv", csvFile, url.Values{"agentId": {a.ID}, "name": {"From CSV"}, "dryRun": {"1"}}); code != 200 ||
		!strings.Contains(body, "2 of 2 would be called") {
		t.Fatalf("CSV dry run: %d %.2000s", code, body)
	}
	if code, _ := e.postFile(owner, "/batches", "file", "list.csv", csvFile, url.Values{"agentId": {a.ID}, "name": {"From CSV"}}); code != http.StatusSeeOther {
		t.Fatalf("CSV start: %d", code)
	}
	if p, _ := e.site.f.Calls.ListBatches(ctx, owner.orgID, calls.BatchListOptions{Limit: 10}); len(p.Batches) != 3 || p.Batches[0].Name != "From CSV" || p.Batches[0].Total != 2 {
		t.Fatalf("batches after the CSV: %+v", p.Batches)
	}
	// Bad input: no numbers, an agent of another org; nothing created.
	if code, body, _ := e.post(owner, "/batches", url.Values{"agentId": {a.ID}, "numbers": {"\n"}}); code != 400 || !strings.Contains(body, "at least one phone number") {
		t.Fatalf("no numbers: %d", code)
	}
	if code, _, _ := e.post(other, "/batches", form); code != 404 && code != 400 {
		t.Fatalf("another org's agent: %d", code)
	}
	if p, _ := e.site.f.Calls.ListBatches(ctx, other.orgID, calls.BatchListOptions{Limit: 10}); len(p.Batches) != 0 {
		t.Fatal("a batch was created in the other org")
	}
}

// One outbound call from the dashboard; a bad number is shown on the form.
func TestPlaceOneCall(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	a, _ := e.db.Agents.CreateAgent(context.Background(), agentstore.Agent{OrgID: owner.orgID, Name: "Ava", Type: "voice", Status: "active", PhoneNumbers: []string{"+15550001111"}})
	if code, body, _ := e.get(owner, "/calls/new"); code != 200 || !strings.Contains(body, `name="phoneNumber"`) {
		t.Fatalf("form: %d", code)
	}
	if code, body, _ := e.post(owner, "/calls", url.Values{"agentId": {a.ID}, "phoneNumber": {"12"}}); code != 400 || !strings.Contains(body, `value="12"`) {
		t.Fatalf("bad number: %d %.500s", code, body)
	}
	code, body, h := e.post(owner, "/calls", url.Values{"agentId": {a.ID}, "phoneNumber": {"+14155550100"}})
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/calls/") {
		t.Fatalf("place: %d %.500s", code, body)
	}
	viewer := e.add(owner, "v@acme.test", "viewer")
	if code, _, _ := e.post(viewer, "/calls", url.Values{"agentId": {a.ID}, "phoneNumber": {"+14155550100"}}); code != 403 {
		t.Fatalf("viewer places a call: %d", code)
	}
}

// parseContacts reads pasted lines and CSV files with or without a header.
func TestParseContacts(t *testing.T) {
	for in, want := range map[string]string{
		"+1415,Ann\n+1416":                   "+1415/Ann +1416/",
		"name,phone\nAnn,+1415\nBob,+1416\n": "+1415/Ann +1416/Bob",
		"\n  +1415  \n\n":                    "+1415/",
		"phone\n+1415\n,\n":                  "+1415/",
	} {
		cs, err := parseContacts(strings.NewReader(in))
		var got []string
		for _, c := range cs {
			got = append(got, c.Phone+"/"+c.Name)
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%q: %v %v, want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "phone\n", "\"+1415"} {
		if _, err := parseContacts(strings.NewReader(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func FuzzParseContacts(f *testing.F) {
	for _, s := range []string{"+14155550100, Ann\n+14155550101", "name,phone\nAnn,+1415", "\"a\nb\",c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := parseContacts(strings.NewReader(s))
		if err == nil && (len(cs) == 0 || len(cs) > maxContacts) {
			t.Fatalf("%d contacts without an error", len(cs))
		}
		for _, c := range cs {
			if c.Phone == "" {
				t.Fatal("an empty phone")
			}
		}
	})
}
