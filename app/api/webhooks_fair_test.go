package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/testkit"
)

// One organization's endpoints that never answer do not delay another
// organization's deliveries (issue 27 item 4: 320 hung endpoints in one
// organization took all 64 sending slots and delayed another's delivery
// from under 1 s to 34 s). Organization A fills its endpoint cap with hung
// receivers, two pings each; B's ping still arrives within 2 s.
func TestWebhookFairShareAcrossOrganizations(t *testing.T) {
	e := newTestEnv(t, func(c *serveConfig) {
		c.Webhooks = events.Config{AllowPrivate: true, Poll: 50 * time.Millisecond, Timeout: 10 * time.Second}
	})
	release := make(chan struct{})
	var hung atomic.Int64
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer stuck.Close()
	defer close(release)
	var ids []string
	for i := range events.MaxEndpointsPerOrg {
		id, _ := e.createWebhook(e.key, fmt.Sprintf("%s/hook/%d", stuck.URL, i), "*")
		ids = append(ids, id)
	}
	if code, _, b := e.do("POST", "/api/v2/webhooks", e.key, map[string]any{"url": stuck.URL + "/one-more", "events": []string{"*"}}); code != 409 {
		t.Fatalf("endpoint %d: %d %s, want 409", events.MaxEndpointsPerOrg+1, code, b)
	}
	for range 2 {
		for _, id := range ids {
			e.do("POST", "/api/v2/webhooks/"+id+"/test", e.key, nil)
		}
	}
	testkit.Within(5*time.Second, func() bool { return hung.Load() >= 16 })
	_, keyB := e.newOrg("bee")
	rc := newReceiver(t, nil)
	idB, _ := e.createWebhook(keyB, rc.srv.URL, "*")
	start := time.Now()
	e.do("POST", "/api/v2/webhooks/"+idB+"/test", keyB, nil)
	got := rc.waitFor(15*time.Second, "B's ping", hasType("ping", 1))
	took := time.Since(start)
	t.Logf("A: %d requests hanging; B's ping delivered in %v", hung.Load(), took)
	if len(eventsOf(got, "ping")) == 0 || took > 2*time.Second {
		t.Fatalf("B's delivery took %v (want < 2 s) while A's receivers hang", took)
	}
}
