package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/app/events"
)

// Helpers shared by the webhook tests: a receiver that records every
// request, and a server whose deliveries retry fast.

// fastWebhooks lets deliveries reach loopback receivers and retry within
// milliseconds.
func fastWebhooks(c *serveConfig) {
	c.Webhooks = events.Config{AllowPrivate: true, Poll: 50 * time.Millisecond, Timeout: 2 * time.Second,
		Schedule: []time.Duration{150 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond}}
}

// received is one request a receiver got.
type received struct {
	Header http.Header
	Body   []byte
	Event  struct {
		ID             string          `json:"id"`
		Type           string          `json:"type"`
		CreatedAt      string          `json:"createdAt"`
		OrganizationID string          `json:"organizationId"`
		Data           json.RawMessage `json:"data"`
	}
	Status int // what the receiver answered
}

// receiver is an httptest server that records requests; answer decides the
// status of each (200 when nil).
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(r received, n int) int // n: requests so far, this one included
	notify chan struct{}
}

func newReceiver(t testing.TB, answer func(r received, n int) int) *receiver {
	rc := &receiver{t: t, answer: answer, notify: make(chan struct{}, 1)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var x received
		x.Header = r.Header.Clone()
		x.Body, _ = io.ReadAll(r.Body)
		json.Unmarshal(x.Body, &x.Event)
		rc.mu.Lock()
		x.Status = http.StatusOK
		if rc.answer != nil {
			x.Status = rc.answer(x, len(rc.got)+1)
		}
		rc.got = append(rc.got, x)
		rc.mu.Unlock()
		select {
		case rc.notify <- struct{}{}:
		default:
		}
		w.WriteHeader(x.Status)
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// requests is a copy of what arrived so far.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// waitFor polls until cond holds on what arrived, or fails the test.
func (rc *receiver) waitFor(timeout time.Duration, what string, cond func([]received) bool) []received {
	rc.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := rc.requests()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			types := []string{}
			for _, r := range got {
				types = append(types, r.Event.Type)
			}
			rc.t.Fatalf("receiver: %s not seen within %s; got %v", what, timeout, types)
		}
		select {
		case <-rc.notify:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// createWebhook registers the receiver and returns the id and secret.
func (e *testEnv) createWebhook(key, url string, events ...string) (string, string) {
	e.t.Helper()
	var out struct {
		Data struct {
			ID, Secret string
		}
	}
	if code := e.doJSON("POST", "/api/v2/webhooks", key, map[string]any{"url": url, "events": events}, &out); code != 201 {
		e.t.Fatalf("create webhook: %d %+v", code, out)
	}
	return out.Data.ID, out.Data.Secret
}
