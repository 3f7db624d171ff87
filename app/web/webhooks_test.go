package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/storage/agentstore"
)

// Webhooks from the dashboard: created with the secret shown once, its
// deliveries listed with status, retried, the secret rotated (shown once
// again), disabled and enabled, deleted. Roles and other organizations are
// refused. The event log lists the events, filtered by type.
func TestWebhookPagesAndEventLog(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	code, body, _ := e.post(owner, "/webhooks", url.Values{"url": {"https://hooks.example.com/a"}, "events": {"call.queued", "call.ended"}, "description": {"CRM"}})
	secret := regexp1(body, `value="(whsec_[^"]+)"`)
	if code != 201 || secret == "" || !strings.Contains(body, "shown this once") {
		t.Fatalf("create: %d %.2000s", code, body)
	}
	if _, list, _ := e.get(owner, "/webhooks"); strings.Contains(list, secret) || !strings.Contains(list, "hooks.example.com/a") {
		t.Fatal("the list shows the secret, or not the endpoint")
	}
	if code, body, _ := e.post(owner, "/webhooks", url.Values{"url": {"ftp://x"}, "events": {"*"}}); code != 400 || !strings.Contains(body, "url: must use http or https") ||
		!strings.Contains(body, `value="ftp://x"`) {
		t.Fatalf("bad url: %d", code)
	}
	ws, _ := e.site.f.Events.List(ctx, owner.orgID)
	if len(ws) != 1 {
		t.Fatalf("%d webhooks", len(ws))
	}
	id := ws[0].ID
	// A call queues an event, owed to the endpoint.
	a, _ := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: owner.orgID, Name: "Ava", Type: "voice", Status: "active", PhoneNumbers: []string{"+15550001111"}})
	if code, _, _ := e.post(owner, "/calls", url.Values{"agentId": {a.ID}, "phoneNumber": {"+14155550100"}}); code != http.StatusSeeOther {
		t.Fatalf("call: %d", code)
	}
	if code, _, _ := e.post(owner, "/webhooks/"+id+"/test", nil); code != http.StatusSeeOther {
		t.Fatalf("test: %d", code)
	}
	_, body, _ = e.get(owner, "/webhooks/"+id)
	if !strings.Contains(body, "<code>ping</code>") || !strings.Contains(body, "st-pending") {
		t.Fatalf("deliveries: %.4000s", body)
	}
	if code, _, _ := e.post(owner, "/webhooks/"+id+"/enabled", url.Values{"enabled": {"0"}}); code != http.StatusSeeOther {
		t.Fatalf("disable: %d", code)
	}
	if w, _ := e.site.f.Events.Get(ctx, owner.orgID, id); w.Enabled {
		t.Fatal("still enabled")
	}
	p, _ := e.site.f.Events.Deliveries(ctx, owner.orgID, id, events.DeliveryQuery{})
	did := p.Deliveries[0].ID
	if code, body, _ := e.post(owner, "/webhooks/"+id+"/deliveries/"+did+"/retry", nil); code != 409 || !strings.Contains(body, "disabled") {
		t.Fatalf("retry on a disabled endpoint: %d", code)
	}
	if code, _, _ := e.post(owner, "/webhooks/"+id+"/enabled", url.Values{"enabled": {"1"}}); code != http.StatusSeeOther {
		t.Fatalf("enable: %d", code)
	}
	if code, body, _ := e.post(owner, "/webhooks/"+id+"/deliveries/"+did+"/retry", nil); code != http.StatusSeeOther {
		t.Fatalf("retry: %d %.300s", code, body)
	}
	code, body, _ = e.post(owner, "/webhooks/"+id+"/rotate", nil)
	if again := regexp1(body, `value="(whsec_[^"]+)"`); code != 200 || again == "" || again == secret {
		t.Fatalf("rotate: %d %q", code, again)
	}

	// The event log.
	_, body, _ = e.get(owner, "/events")
	if !strings.Contains(body, "<code>call.queued</code>") || !strings.Contains(body, "data-event-log") {
		t.Fatalf("event log: %.3000s", body)
	}
	if _, body, _ = e.get(owner, "/events?type=call.ended"); strings.Contains(body, "<code>call.queued</code>") {
		t.Fatal("the type filter keeps other types")
	}
	if code, _, _ := e.get(owner, "/events?type=call.nope"); code != 400 {
		t.Fatalf("bad type: %d", code)
	}

	viewer := e.add(owner, "v@acme.test", "viewer")
	for _, path := range []string{"/webhooks", "/webhooks/" + id, "/events"} {
		if code, _, _ := e.get(viewer, path); code != 403 {
			t.Fatalf("viewer GET %s: %d", path, code)
		}
	}
	if code, _, _ := e.post(viewer, "/webhooks/"+id+"/rotate", nil); code != 403 {
		t.Fatalf("viewer rotates: %d", code)
	}
	other := e.org("globex")
	if code, _, _ := e.get(other, "/webhooks/"+id); code != 404 {
		t.Fatalf("other org reads the webhook: %d", code)
	}
	if code, _, _ := e.post(other, "/webhooks/"+id+"/delete", nil); code != 404 {
		t.Fatalf("other org deletes: %d", code)
	}
	if _, body, _ := e.get(other, "/events"); strings.Contains(body, "call.queued</code>") {
		t.Fatal("another organization sees our events")
	}
	if code, _, _ := e.post(owner, "/webhooks/"+id+"/delete", nil); code != http.StatusSeeOther {
		t.Fatalf("delete: %d", code)
	}
	if ws, _ := e.site.f.Events.List(ctx, owner.orgID); len(ws) != 0 {
		t.Fatal("not deleted")
	}
}
