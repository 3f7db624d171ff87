package api

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/events"
)

// openStream opens the event stream with a key and returns its lines as
// they come; the channel closes when the server ends the stream.
func (e *testEnv) openStream(ctx context.Context, key string) (int, <-chan string) {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/v2/events/stream", nil)
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return resp.StatusCode, lines
}

func fastStreams(c *serveConfig) {
	fastWebhooks(c)
	c.Webhooks.Recheck = 200 * time.Millisecond
}

// An open stream ends when its key is revoked (issue 27 item 3: a stream
// opened before the revocation kept delivering call events, phone numbers
// included). Events logged after the revocation never reach it.
func TestStreamEndsWhenKeyRevoked(t *testing.T) {
	e := newTestEnv(t, fastStreams)
	rc := newReceiver(t, nil)
	whID, _ := e.createWebhook(e.key, rc.srv.URL, "*")
	var k struct{ Data struct{ ID, Key string } }
	if code := e.doJSON("POST", "/api/v2/api-keys", e.key, map[string]any{"name": "stream"}, &k); code != 201 {
		t.Fatalf("create key: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, lines := e.openStream(ctx, k.Data.Key)
	if code != 200 {
		t.Fatalf("stream: %d", code)
	}
	if code, _, _ := e.do("DELETE", "/api/v2/api-keys/"+k.Data.ID, e.key, nil); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	// The guard's re-check runs on its own tick; nothing outside shows it
	// has seen the revocation, and the check is that no event arrives after.
	time.Sleep(100 * time.Millisecond)
	e.do("POST", "/api/v2/webhooks/"+whID+"/test", e.key, nil)
	deadline := time.After(3 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return // closed by the server
			}
			if strings.HasPrefix(l, "event: ") {
				t.Fatalf("an event reached a stream whose key was revoked: %s", l)
			}
		case <-deadline:
			t.Fatal("the stream of a revoked key is still open after 3 s")
		}
	}
}

// A role that loses events:read loses its open stream too.
func TestStreamEndsWhenRoleLosesEvents(t *testing.T) {
	e := newTestEnv(t, fastStreams)
	key := e.keyWithRole(e.orgID, "member", access.KeyOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, lines := e.openStream(ctx, key)
	if code != 200 {
		t.Fatalf("stream: %d", code)
	}
	users, _ := e.db.Orgs.ListUsers(ctx, e.orgID)
	for _, u := range users {
		if u.Role == "member" {
			if _, err := e.db.Orgs.SetUserRole(ctx, e.orgID, u.ID, "viewer"); err != nil {
				t.Fatal(err)
			}
		}
	}
	select {
	case <-drain(lines):
	case <-time.After(3 * time.Second):
		t.Fatal("the stream of a viewer is still open after 3 s")
	}
}

// drain closes its channel once lines is closed.
func drain(lines <-chan string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range lines {
		}
		close(done)
	}()
	return done
}

// A key holds a few streams at once; one more is refused with 429.
func TestStreamsCappedPerKey(t *testing.T) {
	e := newTestEnv(t, fastStreams)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range events.MaxStreamsPerKey {
		if code, _ := e.openStream(ctx, e.key); code != 200 {
			t.Fatalf("stream %d: %d", i, code)
		}
	}
	if code, _ := e.openStream(ctx, e.key); code != 429 {
		t.Fatalf("stream %d: %d, want 429", events.MaxStreamsPerKey+1, code)
	}
	other := e.keyWithRole(e.orgID, "member", access.KeyOptions{})
	if code, _ := e.openStream(ctx, other); code != 200 {
		t.Fatalf("another key's stream: %d", code)
	}
}
