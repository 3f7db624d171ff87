package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// eventsOf returns the received events of one type.
func eventsOf(rs []received, typ string) []received {
	var out []received
	for _, r := range rs {
		if r.Event.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

func hasType(typ string, n int) func([]received) bool {
	return func(rs []received) bool { return len(eventsOf(rs, typ)) >= n }
}

// Retries, the voice agent's result, a finished batch and a listings sync
// each bring their event, with the data their GET shows.
func TestWebhookEventCatalogue(t *testing.T) {
	e := newTestEnv(t, fastSim(50*time.Millisecond), fastWebhooks)
	rc := newReceiver(t, nil)
	e.createWebhook(e.key, rc.srv.URL, "call.retry_scheduled", "call.ended", "call.result", "batch.completed",
		"listings.sync.completed")
	agent := e.voiceAgent(e.orgID)
	now := time.Now().UTC().Format(time.RFC3339)
	var batch struct {
		Data struct {
			BatchID string
			Results []struct{ CallID string }
		}
	}
	if code := e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID, "name": "Retry check",
		"calls":         []map[string]any{{"contactPhone": "+14155550100"}, {"contactPhone": "+14155550486"}},
		"retrySchedule": []string{now}}, &batch); code != 201 {
		t.Fatalf("batch: %d %+v", code, batch)
	}
	got := rc.waitFor(10*time.Second, "batch.completed and both call.ended", func(rs []received) bool {
		return hasType("batch.completed", 1)(rs) && hasType("call.ended", 2)(rs)
	})
	var b struct {
		BatchID  string
		Name     string
		Total    int
		Statuses map[string]int
	}
	json.Unmarshal(eventsOf(got, "batch.completed")[0].Event.Data, &b)
	if b.Total != 2 || b.Name != "Retry check" || b.Statuses["completed"] != 1 || b.Statuses["busy"] != 1 {
		t.Errorf("batch.completed: %+v", b)
	}
	// batch.completed follows the call.ended of the call that completed it.
	last := slices.IndexFunc(got, func(r received) bool { return r.Event.Type == "batch.completed" })
	if ends := eventsOf(got[:last], "call.ended"); len(ends) < 1 {
		t.Errorf("batch.completed arrived before any call.ended")
	}
	retries := eventsOf(got, "call.retry_scheduled")
	if len(retries) != 1 {
		t.Fatalf("call.retry_scheduled: %d", len(retries))
	}
	var retry callView
	json.Unmarshal(retries[0].Event.Data, &retry)
	if retry.Status != "scheduled" || retry.NextAttemptAt == nil || retry.Attempts != 1 || *retry.LastOutcome != "busy" {
		t.Errorf("call.retry_scheduled data: %s", retries[0].Event.Data)
	}

	// The voice agent's result.
	done := batch.Data.Results[0].CallID
	if code, _, b := e.do("POST", "/api/v1/calls/"+done+"/result", e.key, map[string]any{"outcome": "booked",
		"transcript": []map[string]any{{"role": "agent", "text": "Hello", "at": now}}}); code != 200 {
		t.Fatalf("result: %d %s", code, b)
	}
	got = rc.waitFor(5*time.Second, "call.result", hasType("call.result", 1))
	var res struct {
		ID         string
		Outcome    string
		Transcript []struct{ Role, Text string }
	}
	json.Unmarshal(eventsOf(got, "call.result")[0].Event.Data, &res)
	if res.ID != done || res.Outcome != "booked" || len(res.Transcript) != 1 {
		t.Errorf("call.result data: %+v", res)
	}

	// A listings sync.
	e.sync(e.key, false, map[string]any{"externalId": "a1", "title": "Chair", "price": 12.5},
		map[string]any{"externalId": "a2", "title": "Table"})
	got = rc.waitFor(5*time.Second, "listings.sync.completed", hasType("listings.sync.completed", 1))
	var ls struct {
		Imported, Updated int
		Listings          []struct {
			ExternalID string
			Price      *string
			Status     string
		}
	}
	json.Unmarshal(eventsOf(got, "listings.sync.completed")[0].Event.Data, &ls)
	if ls.Imported != 2 || len(ls.Listings) != 2 || ls.Listings[0].Price == nil || *ls.Listings[0].Price != "12.50" ||
		ls.Listings[0].Status != "active" {
		t.Errorf("listings.sync.completed data: %s", eventsOf(got, "listings.sync.completed")[0].Event.Data)
	}
}

// After a rotation, deliveries carry a signature for the new and the old
// secret; the old secret is never shown again.
func TestWebhookRotateSecret(t *testing.T) {
	e := newTestEnv(t, fastWebhooks)
	rc := newReceiver(t, nil)
	id, old := e.createWebhook(e.key, rc.srv.URL, "*")
	var rot struct {
		Data struct {
			Secret                  string
			PreviousSecretExpiresAt *string
		}
	}
	if code := e.doJSON("POST", "/api/v2/webhooks/"+id+"/rotate-secret", e.key, nil, &rot); code != 200 ||
		rot.Data.Secret == old || rot.Data.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotate: %d %+v", code, rot)
	}
	exp, _ := time.Parse(time.RFC3339, *rot.Data.PreviousSecretExpiresAt)
	if d := time.Until(exp); d < 23*time.Hour || d > 25*time.Hour {
		t.Errorf("old secret signs for %s", d)
	}
	e.do("POST", "/api/v2/webhooks/"+id+"/test", e.key, nil)
	r := rc.waitFor(5*time.Second, "ping", hasType("ping", 1))[0]
	if sigs := strings.Fields(r.Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("signatures %q", sigs)
	}
	for _, s := range []string{old, rot.Data.Secret} {
		v, _ := standardwebhooks.NewWebhook(s)
		if err := v.Verify(r.Body, r.Header); err != nil {
			t.Errorf("verify: %v", err)
		}
	}
	_, _, body := e.do("GET", "/api/v2/webhooks/"+id, e.key, nil)
	if strings.Contains(string(body), "whsec_") || strings.Contains(string(body), `"secret"`) {
		t.Errorf("GET shows a secret: %s", body)
	}
}

// An endpoint that fails everything for DisableAfter is disabled with the
// reason in its GET; its deliveries pause, and resume when it is enabled.
func TestWebhookDisabledAfterFailing(t *testing.T) {
	e := newTestEnv(t, fastWebhooks, func(c *serveConfig) {
		c.Webhooks.DisableAfter = 300 * time.Millisecond
		c.Webhooks.Schedule = slices.Repeat([]time.Duration{40 * time.Millisecond}, 40)
	})
	healthy := false
	rc := newReceiver(t, func(r received, n int) int {
		if healthy {
			return 200
		}
		return http.StatusBadGateway
	})
	id, _ := e.createWebhook(e.key, rc.srv.URL, "*")
	e.do("POST", "/api/v2/webhooks/"+id+"/test", e.key, nil)
	var wh struct {
		Data struct {
			Enabled        bool
			DisabledReason *string
		}
	}
	testkit.Eventually(t, 5*time.Second, func() bool {
		e.doJSON("GET", "/api/v2/webhooks/"+id, e.key, nil, &wh)
		return !wh.Data.Enabled
	}, "not disabled")
	if wh.Data.DisabledReason == nil || !strings.Contains(*wh.Data.DisabledReason, "every delivery failed") ||
		!strings.Contains(*wh.Data.DisabledReason, "HTTP 502") {
		t.Errorf("reason %v", wh.Data.DisabledReason)
	}
	var dl struct {
		Data struct{ Deliveries []struct{ Status string } }
	}
	e.doJSON("GET", "/api/v2/webhooks/"+id+"/deliveries", e.key, nil, &dl)
	if len(dl.Data.Deliveries) != 1 || dl.Data.Deliveries[0].Status != "paused" {
		t.Fatalf("deliveries: %+v", dl)
	}
	if code, _, _ := e.do("POST", "/api/v2/webhooks/"+id+"/test", e.key, nil); code != 409 {
		t.Errorf("test on a disabled endpoint: %d", code)
	}
	rc.mu.Lock()
	healthy = true
	rc.mu.Unlock()
	if code := e.doJSON("PATCH", "/api/v2/webhooks/"+id, e.key, map[string]any{"enabled": true}, &wh); code != 200 ||
		!wh.Data.Enabled || wh.Data.DisabledReason != nil {
		t.Fatalf("enable: %d %+v", code, wh)
	}
	rc.waitFor(5*time.Second, "the paused ping delivered", func(rs []received) bool { return rs[len(rs)-1].Status == 200 })
}

// A receiver URL on a private address is refused unless the server allows
// private receivers.
func TestWebhookRefusesPrivateURL(t *testing.T) {
	e := newTestEnv(t)
	for _, u := range []string{"http://127.0.0.1:9/hook", "http://169.254.169.254/latest", "http://10.1.2.3/x", "http://localhost/"} {
		code, _, b := e.do("POST", "/api/v2/webhooks", e.key, map[string]any{"url": u, "events": []string{"*"}})
		if code != 400 || !strings.Contains(string(b), "url: ") {
			t.Errorf("%s: %d %s", u, code, b)
		}
	}
}

// Neither the event log nor the delivery records ever hold an API key or
// a webhook secret, and the server log holds no secret.
func TestEventLogHoldsNoSecrets(t *testing.T) {
	e := newTestEnv(t, fastSim(20*time.Millisecond), fastWebhooks)
	rc := newReceiver(t, nil)
	id, secret := e.createWebhook(e.key, rc.srv.URL, "*")
	var rot struct{ Data struct{ Secret string } }
	e.doJSON("POST", "/api/v2/webhooks/"+id+"/rotate-secret", e.key, nil, &rot)
	var key struct{ Data struct{ Key string } }
	e.doJSON("POST", "/api/v2/api-keys", e.key, map[string]any{"name": "k"}, &key)
	agent := e.voiceAgent(e.orgID)
	call := e.outbound(e.key, agent.ID, "+14155550100")
	e.waitFinal(e.key, call, 5*time.Second)
	e.do("POST", "/api/v2/webhooks/"+id+"/test", e.key, nil)
	rc.waitFor(5*time.Second, "call.ended and ping", func(rs []received) bool {
		return hasType("call.ended", 1)(rs) && hasType("ping", 1)(rs)
	})
	secrets := []string{secret, rot.Data.Secret, e.key, key.Data.Key}
	for _, s := range []string{secret, rot.Data.Secret} {
		secrets = append(secrets, strings.TrimPrefix(s, "whsec_"))
	}
	// Every stored text, read with the database's own driver and searched
	// here, the same on both engines; an event holds no key or secret prefix.
	db := dbtest.Open(t, e.db.Path())
	defer db.Close()
	for _, q := range []struct {
		sql     string
		markers []string
	}{
		{"SELECT CAST(data AS TEXT) FROM events", []string{"whsec_", "agd_"}},
		{"SELECT coalesce(response_body, '') || coalesce(error, '') FROM webhook_attempts", nil},
		{"SELECT coalesce(last_error, '') FROM webhook_deliveries", nil},
	} {
		rows, err := db.QueryContext(context.Background(), q.sql)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var text string
			if err := rows.Scan(&text); err != nil {
				t.Fatal(err)
			}
			n++
			for _, s := range append(q.markers, secrets...) {
				if strings.Contains(text, s) {
					t.Errorf("%s: row %d holds a secret", q.sql, n)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if strings.Contains(q.sql, "FROM events") && n < 5 {
			t.Errorf("only %d events logged", n)
		}
	}
	logs := e.logs.String()
	for _, s := range secrets[:2] {
		if strings.Contains(logs, s) || strings.Contains(logs, strings.TrimPrefix(s, "whsec_")) {
			t.Error("a webhook secret is in the server log")
		}
	}
}
