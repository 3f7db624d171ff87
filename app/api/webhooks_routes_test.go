package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
)

// Each webhook and event route answers one success and one refusal in the
// documented shapes (the schema check holds them against the document).
func TestWebhookRoutesSuccessAndError(t *testing.T) {
	e := newTestEnv(t, fastWebhooks)
	rc := newReceiver(t, nil)
	id, _ := e.createWebhook(e.key, rc.srv.URL, "*")
	must := func(method, path string, body any, want int) []byte {
		t.Helper()
		code, _, b := e.do(method, path, e.key, body)
		if code != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, b)
		}
		return b
	}
	must("PATCH", "/api/v2/webhooks/"+id, map[string]any{"events": []string{"no.such.event"}}, 400)
	must("POST", "/api/v2/webhooks/no-such-id/rotate-secret", nil, 404)
	must("GET", "/api/v2/webhooks/no-such-id/deliveries", nil, 404)
	must("POST", "/api/v2/webhooks/"+id+"/deliveries/no-such-delivery/retry", nil, 404)
	must("GET", "/api/v2/events/types", nil, 200)
	if code, _, _ := e.do("GET", "/api/v2/events/types", "", nil); code != 401 {
		t.Fatalf("event types without a key: %d", code)
	}
	if code, _, _ := e.do("GET", "/api/v2/events/stream", "", nil); code != 401 {
		t.Fatalf("stream without a key: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/v2/events/stream", nil)
	req.Header.Set("x-api-key", e.key)
	resp, err := e.client.Do(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %v %v", err, resp)
	}
	resp.Body.Close()
	// A ping creates a delivery, which can be replayed.
	must("POST", "/api/v2/webhooks/"+id+"/test", nil, 202)
	rc.waitFor(5*time.Second, "the ping", func(r []received) bool { return len(r) > 0 })
	var list struct {
		Data struct {
			Deliveries []struct{ ID string } `json:"deliveries"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v2/webhooks/"+id+"/deliveries", e.key, nil, &list); code != 200 || len(list.Data.Deliveries) == 0 {
		t.Fatalf("deliveries: %d %+v", code, list)
	}
	// The receiver may have answered before the server recorded the answer:
	// a delivery still being sent is refused with 409 until it settles.
	retry := "/api/v2/webhooks/" + id + "/deliveries/" + list.Data.Deliveries[0].ID + "/retry"
	testkit.Eventually(t, 5*time.Second, func() bool {
		code, _, b := e.do("POST", retry, e.key, nil)
		if code != 202 && code != 409 {
			t.Fatalf("retry: %d %s", code, b)
		}
		return code == 202
	}, "retry still refused with 409")
	must("DELETE", "/api/v2/webhooks/"+id, nil, 200)
	must("DELETE", "/api/v2/webhooks/"+id, nil, 404)
}
