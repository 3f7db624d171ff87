package api

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// Compliance tests through HTTP: the do-not-call list (refused at schedule
// time, skipped at dial time, never shared across organizations) and the
// organization's calling hours.

type dncPage struct {
	Data struct {
		Numbers []struct {
			PhoneNumber string  `json:"phoneNumber"`
			Reason      *string `json:"reason"`
		}
		Pagination struct{ Total int }
	}
}

func TestDoNotCall(t *testing.T) {
	opt, logPath := simWithLog(t.TempDir(), 50, 50*time.Millisecond)
	e := newTestEnv(t, opt)
	agent := e.voiceAgent(e.orgID)
	const listed = "+14155550111"

	// A call scheduled for later, then its number listed: never dialled.
	var sched struct{ Data struct{ ID string } }
	later := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	if code := e.doJSON("POST", "/api/v1/calls/schedule", e.key, map[string]any{"agentId": agent.ID,
		"contactPhone": "+14155550222", "scheduledAt": later}, &sched); code != 201 {
		t.Fatalf("schedule: %d", code)
	}
	var added struct {
		Data struct {
			Added, AlreadyListed, CallsFailed int
		}
	}
	if code := e.doJSON("POST", "/api/v1/dnc", e.key, map[string]any{"numbers": []string{listed, "+1 (415) 555-0222", listed},
		"reason": "asked on a call"}, &added); code != 200 || added.Data.Added != 2 || added.Data.CallsFailed != 1 {
		t.Fatalf("add: %d %+v", code, added)
	}
	c := e.getCall(e.key, sched.Data.ID)
	if c.Status != "failed" || c.FailureReason == nil || *c.FailureReason != "do_not_call" || c.Attempts != 0 {
		t.Fatalf("listed after scheduling: %+v", c)
	}

	// Refused at schedule, outbound and batch time.
	for _, r := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/calls/schedule", map[string]any{"agentId": agent.ID, "contactPhone": listed}},
		{"/api/v1/calls/outbound", map[string]any{"agentId": agent.ID, "phoneNumber": "+1.415.555.0111"}},
	} {
		if code, _, body := e.do("POST", r.path, e.key, r.body); code != 400 || !strings.Contains(string(body), "number is on the do-not-call list") {
			t.Errorf("%s: %d %s", r.path, code, body)
		}
	}
	var batch struct {
		Data struct {
			Results []struct {
				Success bool
				Error   string
			}
		}
	}
	code := e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID,
		"calls": []map[string]any{{"contactPhone": "+14155550333"}, {"contactPhone": listed}}}, &batch)
	if code != 207 || !batch.Data.Results[0].Success || batch.Data.Results[1].Error != "number is on the do-not-call list" {
		t.Fatalf("batch: %d %+v", code, batch)
	}

	// Another organization neither sees nor changes this list, and may call the number.
	otherOrg, otherKey := e.newOrg("other")
	otherAgent := e.voiceAgent(otherOrg)
	var page dncPage
	if code := e.doJSON("GET", "/api/v1/dnc?phoneNumber="+listed, otherKey, nil, &page); code != 200 || page.Data.Pagination.Total != 0 {
		t.Fatalf("other org sees the number: %d %+v", code, page)
	}
	var removed struct {
		Data struct{ Removed, NotListed int }
	}
	if code := e.doJSON("DELETE", "/api/v1/dnc", otherKey, map[string]any{"numbers": []string{listed}}, &removed); code != 200 ||
		removed.Data.Removed != 0 || removed.Data.NotListed != 1 {
		t.Fatalf("other org removes: %d %+v", code, removed)
	}
	if code := e.doJSON("POST", "/api/v1/calls/schedule", otherKey, map[string]any{"agentId": otherAgent.ID, "contactPhone": listed}, nil); code != 201 {
		t.Fatalf("other org may call the number: %d", code)
	}
	if code := e.doJSON("GET", "/api/v1/dnc?limit=10", e.key, nil, &page); code != 200 || page.Data.Pagination.Total != 2 ||
		page.Data.Numbers[0].PhoneNumber != listed || *page.Data.Numbers[0].Reason != "asked on a call" {
		t.Fatalf("own list: %d %+v", code, page)
	}

	// Bad input names the field.
	for _, r := range []struct{ method, path, key, want string }{
		{"POST", "/api/v1/dnc", `{"numbers":["+14155550100","call me"]}`, "numbers[1]"},
		{"POST", "/api/v1/dnc", `{"numbers":[]}`, "numbers must not be empty"},
		{"DELETE", "/api/v1/dnc", `{}`, "numbers is required"},
	} {
		if code, _, body := e.do(r.method, r.path, e.key, r.key); code != 400 || !strings.Contains(string(body), r.want) {
			t.Errorf("%s %s %s: %d %s", r.method, r.path, r.key, code, body)
		}
	}
	if code, _, body := e.do("GET", "/api/v1/dnc?limit=0", e.key, nil); code != 400 || !strings.Contains(string(body), "limit") {
		t.Errorf("limit 0: %d %s", code, body)
	}
	if code, _, _ := e.do("POST", "/api/v1/dnc", "", map[string]any{"numbers": []string{listed}}); code != 401 {
		t.Errorf("no key: %d", code)
	}

	// Removed, the number may be called again; the other org's call was dialled.
	if code := e.doJSON("DELETE", "/api/v1/dnc", e.key, map[string]any{"numbers": []string{listed}}, &removed); code != 200 || removed.Data.Removed != 1 {
		t.Fatalf("remove: %d %+v", code, removed)
	}
	// Past the first call's scheduled time: the check is that the listed
	// call is never dialled, a non-event no wait on an event can show.
	testkit.Never(t, 2500*time.Millisecond, func() bool {
		return slices.ContainsFunc(testbin.DialLog(t, logPath), func(l string) bool { return strings.HasPrefix(l, sched.Data.ID) })
	}, "the listed call %s was dialled", sched.Data.ID)
}

// Calling hours: off by default; on, an immediate call outside them is
// refused unless an owner or admin overrides, and scheduled and batched
// calls move to the next allowed moment.
func TestCallingHours(t *testing.T) {
	e := newTestEnv(t, fastSim(100*time.Millisecond))
	agent := e.voiceAgent(e.orgID)
	viewer := e.keyWithRole(e.orgID, "viewer", access.KeyOptions{})
	member := e.keyWithRole(e.orgID, "member", access.KeyOptions{})
	admin := e.keyWithRole(e.orgID, "admin", access.KeyOptions{})

	var st struct {
		Data struct {
			CallingHours struct {
				Enabled         bool
				Start, End      string
				Days            []int
				DefaultTimezone string
			}
			UpdatedAt *string
		}
	}
	if code := e.doJSON("GET", "/api/v2/organization/settings", viewer, nil, &st); code != 200 || st.Data.CallingHours.Enabled ||
		st.Data.CallingHours.Start != "08:00" || len(st.Data.CallingHours.Days) != 7 || st.Data.UpdatedAt != nil {
		t.Fatalf("defaults: %d %+v", code, st)
	}
	// A window of one hour that does not hold the current hour (UTC).
	h := (time.Now().UTC().Hour() + 2) % 24
	if h == 23 {
		h = 1
	}
	start, end := fmt.Sprintf("%02d:00", h), fmt.Sprintf("%02d:00", h+1)
	patch := map[string]any{"callingHours": map[string]any{"enabled": true, "start": start, "end": end, "defaultTimezone": "UTC"}}
	if code, _, _ := e.do("PATCH", "/api/v2/organization/settings", member, patch); code != 403 {
		t.Fatalf("member changes settings: %d", code)
	}
	if code, _, body := e.do("PATCH", "/api/v2/organization/settings", admin, map[string]any{"callingHours": map[string]any{"start": "9am"}}); code != 400 ||
		!strings.Contains(string(body), "callingHours.start") {
		t.Fatalf("bad start: %d %s", code, body)
	}
	if code := e.doJSON("PATCH", "/api/v2/organization/settings", admin, patch, &st); code != 200 || !st.Data.CallingHours.Enabled ||
		st.Data.CallingHours.Start != start || st.Data.UpdatedAt == nil {
		t.Fatalf("enable: %d %+v", code, st)
	}
	if code, _, _ := e.do("GET", "/api/v2/organization/settings", "", nil); code != 401 {
		t.Fatalf("no key: %d", code)
	}

	// +1 555 numbers have no zone of their own: the default (UTC) applies.
	out := map[string]any{"agentId": agent.ID, "phoneNumber": "+15550009999"}
	if code, _, body := e.do("POST", "/api/v1/calls/outbound", e.key, out); code != 400 || !strings.Contains(string(body), "outside calling hours") {
		t.Fatalf("outbound outside hours: %d %s", code, body)
	}
	out["ignoreCallingHours"] = true
	if code, _, body := e.do("POST", "/api/v1/calls/outbound", member, out); code != 403 || !strings.Contains(string(body), "owner or admin") {
		t.Fatalf("member override: %d %s", code, body)
	}
	var queued struct{ Data struct{ ID string } }
	if code := e.doJSON("POST", "/api/v1/calls/outbound", e.key, out, &queued); code != 201 {
		t.Fatalf("owner override: %d", code)
	}
	if c := e.waitFinal(e.key, queued.Data.ID, 10*time.Second); c.Status != "completed" {
		t.Fatalf("overridden call: %+v", c)
	}

	now := time.Now().UTC()
	open := time.Date(now.Year(), now.Month(), now.Day(), h, 0, 0, 0, time.UTC)
	if open.Before(now) {
		open = open.Add(24 * time.Hour)
	}
	want := open.Format(timeLayout)
	var sched struct {
		Data struct {
			ID          string
			ScheduledAt *string
		}
		Message string
	}
	if code := e.doJSON("POST", "/api/v1/calls/schedule", e.key, map[string]any{"agentId": agent.ID, "contactPhone": "+15550009998"}, &sched); code != 201 ||
		sched.Data.ScheduledAt == nil || *sched.Data.ScheduledAt != want {
		t.Fatalf("schedule moved to %s: %d %+v", want, code, sched)
	}
	// The call is stored initiated and moved to scheduled by the scheduler.
	c := e.waitCall(e.key, sched.Data.ID, 5*time.Second, func(c callView) bool { return c.Status != "initiated" })
	if c.ScheduledAt == nil || *c.ScheduledAt != want || c.Status != "scheduled" {
		t.Fatalf("scheduled call: %+v", c)
	}
	var batch struct {
		Data struct {
			Results []struct{ ScheduledAt *string }
		}
	}
	if code := e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID, "dryRun": true,
		"calls": []map[string]any{{"contactPhone": "+15550009997"}}}, &batch); code != 200 || *batch.Data.Results[0].ScheduledAt != want {
		t.Fatalf("batch dry run: %d %+v", code, batch)
	}
}
