package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/testkit"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// A call through the real server and the sim dialer reaches a receiver as
// call.queued, call.ringing, call.answered, call.ended, in order, each
// signed per Standard Webhooks (checked with the reference Go library).
// The receiver answers 500 once; the retry carries the same webhook-id and
// the call's later events wait for it. Then a knowledge upsert brings
// kb.source.completed, and a delivery is replayed.
func TestWebhooksEndToEnd(t *testing.T) {
	e := newTestEnv(t, fastSim(100*time.Millisecond), fastWebhooks)
	failed := false
	rc := newReceiver(t, func(r received, n int) int {
		if r.Event.Type == "call.ringing" && !failed {
			failed = true
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	whID, secret := e.createWebhook(e.key, rc.srv.URL+"/hooks", "*")
	if !strings.HasPrefix(secret, "whsec_") || len(secret) != len("whsec_")+44 {
		t.Fatalf("secret %q: want whsec_ + base64 of 32 bytes", secret)
	}
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}

	agent := e.voiceAgent(e.orgID)
	callID := e.outbound(e.key, agent.ID, "+14155550100")
	e.waitFinal(e.key, callID, 5*time.Second)
	got := rc.waitFor(5*time.Second, "call.ended", func(rs []received) bool {
		return slices.ContainsFunc(rs, func(r received) bool { return r.Event.Type == "call.ended" })
	})

	// Every request is signed, and the same event always has the same id.
	ids := map[string]string{} // webhook-id -> type
	var order []string         // types of the call's events, as acknowledged
	var ringing []received
	for _, r := range got {
		if err := verifier.Verify(r.Body, r.Header); err != nil {
			t.Errorf("%s: signature: %v", r.Event.Type, err)
		}
		id := r.Header.Get("webhook-id")
		if id != r.Event.ID {
			t.Errorf("webhook-id %q, body id %q", id, r.Event.ID)
		}
		if prev, ok := ids[id]; ok && prev != r.Event.Type {
			t.Errorf("webhook-id %s reused for %s and %s", id, prev, r.Event.Type)
		}
		ids[id] = r.Event.Type
		if r.Event.OrganizationID != e.orgID {
			t.Errorf("organizationId %q", r.Event.OrganizationID)
		}
		if r.Event.Type == "call.ringing" {
			ringing = append(ringing, r)
		}
		if r.Status == 200 && strings.HasPrefix(r.Event.Type, "call.") {
			order = append(order, r.Event.Type)
		}
	}
	if want := []string{"call.queued", "call.ringing", "call.answered", "call.ended"}; !reflect.DeepEqual(order, want) {
		t.Errorf("call events acknowledged in order %v, want %v", order, want)
	}
	if len(ringing) != 2 || ringing[0].Status != 500 || ringing[1].Status != 200 ||
		ringing[0].Header.Get("webhook-id") != ringing[1].Header.Get("webhook-id") {
		t.Errorf("ringing: want a 500 then a retry with the same webhook-id, got %d requests", len(ringing))
	}

	// call.ended's data is the call as its GET shows it.
	var ended received
	for _, r := range got {
		if r.Event.Type == "call.ended" {
			ended = r
		}
	}
	_, _, body := e.do("GET", "/api/v1/calls/"+callID, e.key, nil)
	var get struct{ Data any }
	json.Unmarshal(body, &get)
	var data any
	json.Unmarshal(ended.Event.Data, &data)
	if !reflect.DeepEqual(data, get.Data) {
		t.Errorf("call.ended data differs from GET:\n event %s\n get   %s", ended.Event.Data, body)
	}

	// The failed attempt is in the delivery's history.
	var dl struct {
		Data struct {
			Deliveries []struct {
				ID, EventID, EventType, Status string
				Attempts                       int
				AttemptHistory                 []struct {
					Attempt      int
					Status       string
					ResponseCode *int
					ResponseBody *string
				}
			}
		}
	}
	if code := e.doJSON("GET", "/api/v2/webhooks/"+whID+"/deliveries?limit=100", e.key, nil, &dl); code != 200 {
		t.Fatalf("deliveries: %d", code)
	}
	var endedDelivery string
	for _, d := range dl.Data.Deliveries {
		switch d.EventType {
		case "call.ringing":
			h := d.AttemptHistory
			if d.Status != "succeeded" || d.Attempts != 2 || len(h) != 2 || h[0].Status != "failed" || *h[0].ResponseCode != 500 ||
				h[1].Status != "succeeded" || h[1].ResponseBody == nil || *h[1].ResponseBody != `{"ok":true}` {
				t.Errorf("ringing delivery: %+v", d)
			}
		case "call.ended":
			endedDelivery = d.ID
		}
	}

	// Replay: the same event again, with the same webhook-id.
	// The receiver may have answered before the server recorded the answer:
	// a delivery still being sent is refused with 409 until it settles.
	testkit.Eventually(t, 5*time.Second, func() bool {
		code, _, b := e.do("POST", "/api/v2/webhooks/"+whID+"/deliveries/"+endedDelivery+"/retry", e.key, nil)
		if code != 202 && code != 409 {
			t.Fatalf("retry: %d %s", code, b)
		}
		return code == 202
	}, "retry still refused with 409")
	rc.waitFor(5*time.Second, "replayed call.ended", func(rs []received) bool {
		n := 0
		for _, r := range rs {
			if r.Event.ID == ended.Event.ID {
				n++
			}
		}
		return n == 2
	})

	// Knowledge: an upsert ends in kb.source.completed.
	col := e.createCollection(e.key, "Docs")
	var up struct{ Data struct{ DocumentID string } }
	if code := e.doJSON("POST", "/api/v1/kb/sources", e.key, map[string]any{"collectionId": col, "externalId": "faq",
		"title": "FAQ", "content": "# Returns\n\nWithin 30 days."}, &up); code != 200 {
		t.Fatalf("upsert: %d", code)
	}
	got = rc.waitFor(10*time.Second, "kb.source.completed", func(rs []received) bool {
		return slices.ContainsFunc(rs, func(r received) bool { return r.Event.Type == "kb.source.completed" })
	})
	for _, r := range got {
		if r.Event.Type == "kb.source.completed" {
			var src struct{ ID, CollectionID, ExternalID, Status string }
			json.Unmarshal(r.Event.Data, &src)
			if src.ID != up.Data.DocumentID || src.CollectionID != col || src.ExternalID != "faq" || src.Status != "completed" {
				t.Errorf("kb.source.completed data: %s", r.Event.Data)
			}
		}
	}
}

// The log can be pulled page by page, filtered by type, and streamed as
// server-sent events resumed with Last-Event-ID.
func TestEventsPullAndStream(t *testing.T) {
	e := newTestEnv(t, fastWebhooks, func(c *serveConfig) { c.Webhooks.KeepAlive = 100 * time.Millisecond })
	rc := newReceiver(t, nil)
	whID, _ := e.createWebhook(e.key, rc.srv.URL, "call.ended")
	// Three pings (targeted events) make three log entries.
	var pings []string
	for range 3 {
		var out struct{ Data struct{ ID, Type string } }
		if code := e.doJSON("POST", "/api/v2/webhooks/"+whID+"/test", e.key, nil, &out); code != 202 || out.Data.Type != "ping" {
			t.Fatalf("test: %d %+v", code, out)
		}
		pings = append(pings, out.Data.ID)
	}
	rc.waitFor(5*time.Second, "3 pings", func(rs []received) bool { return len(rs) == 3 })

	var page struct {
		Data struct {
			Events []struct {
				ID, Type string
				Data     struct{ WebhookID string }
			}
			NextCursor *string
			HasMore    bool
		}
	}
	if code := e.doJSON("GET", "/api/v2/events?limit=2&type=ping", e.key, nil, &page); code != 200 ||
		len(page.Data.Events) != 2 || !page.Data.HasMore || page.Data.Events[0].ID != pings[0] ||
		page.Data.Events[0].Data.WebhookID != whID || *page.Data.NextCursor != pings[1] {
		t.Fatalf("page 1: %d %+v", code, page)
	}
	if code := e.doJSON("GET", "/api/v2/events?after="+pings[1], e.key, nil, &page); code != 200 ||
		len(page.Data.Events) != 1 || page.Data.HasMore || page.Data.Events[0].ID != pings[2] {
		t.Fatalf("page 2: %d %+v", code, page)
	}
	if code, _, b := e.do("GET", "/api/v2/events?after=nope", e.key, nil); code != 400 || !strings.Contains(string(b), "after") {
		t.Fatalf("unknown cursor: %d %s", code, b)
	}
	if code, _, b := e.do("GET", "/api/v2/events?type=call.nope", e.key, nil); code != 400 {
		t.Fatalf("unknown type: %d %s", code, b)
	}

	// The stream resumes after the first ping, then gets a new one live.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/v2/events/stream", nil)
	req.Header.Set("x-api-key", e.key)
	req.Header.Set("Last-Event-ID", pings[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	var streamed []string
	keepAlive := false
	for sc.Scan() && len(streamed) < 3 {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			streamed = append(streamed, id)
			if len(streamed) == 2 {
				var out struct{ Data struct{ ID string } }
				e.doJSON("POST", "/api/v2/webhooks/"+whID+"/test", e.key, nil, &out)
				pings = append(pings, out.Data.ID)
			}
		}
		if line == ": keep-alive" {
			keepAlive = true
		}
		if strings.HasPrefix(line, "data: ") && !strings.Contains(line, `"type":"ping"`) {
			t.Errorf("data line %q", line)
		}
	}
	if !reflect.DeepEqual(streamed, pings[1:]) {
		t.Errorf("streamed %v, want %v", streamed, pings[1:])
	}
	_ = keepAlive // may or may not fall in this window
}

// Roles: webhooks need webhook:manage (owner, admin); the log needs
// events:read (owner, admin, member).
func TestWebhookPermissions(t *testing.T) {
	e := newTestEnv(t, fastWebhooks)
	member := e.keyWithRole(e.orgID, "member", access.KeyOptions{})
	viewer := e.keyWithRole(e.orgID, "viewer", access.KeyOptions{})
	admin := e.keyWithRole(e.orgID, "admin", access.KeyOptions{})
	for _, c := range []struct {
		key, method, path string
		want              int
	}{
		{member, "GET", "/api/v2/webhooks", 403},
		{viewer, "GET", "/api/v2/webhooks", 403},
		{admin, "GET", "/api/v2/webhooks", 200},
		{member, "GET", "/api/v2/events", 200},
		{viewer, "GET", "/api/v2/events", 403},
		{"", "GET", "/api/v2/events", 401},
	} {
		if code, _, b := e.do(c.method, c.path, c.key, nil); code != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, b, c.want)
		}
	}
	// Another organization's webhook is not found.
	rc := newReceiver(t, nil)
	id, _ := e.createWebhook(e.key, rc.srv.URL, "*")
	_, otherKey := e.newOrg("other")
	if code, _, _ := e.do("GET", "/api/v2/webhooks/"+id, otherKey, nil); code != 404 {
		t.Errorf("other org read: %d", code)
	}
}

// Bad input is a 400 naming the field, in the v2 shape.
func TestWebhookValidation(t *testing.T) {
	e := newTestEnv(t, fastWebhooks)
	for _, c := range []struct {
		body any
		msg  string
	}{
		{map[string]any{"events": []string{"*"}}, "url: is required"},
		{map[string]any{"url": "ftp://example.com/x", "events": []string{"*"}}, "url: must use http or https"},
		{map[string]any{"url": "/relative", "events": []string{"*"}}, "url: must be an absolute http or https URL"},
		{map[string]any{"url": "https://example.com"}, "events: is required"},
		{map[string]any{"url": "https://example.com", "events": []string{}}, "events: must list at least one"},
		{map[string]any{"url": "https://example.com", "events": []string{"call.ended", "call.nope"}}, `events.1: "call.nope" is not an event type`},
		{map[string]any{"url": "https://example.com", "events": "call.ended"}, "events"},
		{map[string]any{"url": "https://example.com", "events": []string{"*"}, "description": strings.Repeat("x", 501)}, "description: must be at most 500"},
	} {
		code, _, b := e.do("POST", "/api/v2/webhooks", e.key, c.body)
		var out struct {
			Error struct {
				Message string
				Status  int
			}
		}
		json.Unmarshal(b, &out)
		if code != 400 || out.Error.Status != 400 || !strings.Contains(out.Error.Message, c.msg) {
			t.Errorf("%v: %d %s, want 400 with %q", c.body, code, b, c.msg)
		}
	}
}

// A loopback receiver is refused by default with a sentence that names the
// flag that allows it (issue 26: it read "is a address not allowed") and not
// what the host resolves to (issue 27).
func TestWebhookLoopbackRefusalNamesTheFlag(t *testing.T) {
	e := newTestEnv(t)
	for _, u := range []string{"http://127.0.0.1:9/hooks", "http://localhost:9/hooks"} {
		code, _, b := e.do("POST", "/api/v2/webhooks", e.key, map[string]any{"url": u, "events": []string{"*"}})
		if code != 400 || !strings.Contains(string(b), "is not an allowed address") || !strings.Contains(string(b), "--webhook-allow-private") ||
			strings.Contains(string(b), "is a address") {
			t.Errorf("%s: %d %s", u, code, b)
		}
	}
}
