package widget

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/widgetstore"
)

// keyLog notes the keys the widget counts, then counts them for real.
type keyLog struct {
	Limits
	keys []string
}

func (k *keyLog) Allow(ctx context.Context, key string, limit int, now time.Time) (bool, int, time.Time, error) {
	k.keys = append(k.keys, key)
	return k.Limits.Allow(ctx, key, limit, now)
}

// With shared limits the widget counts its own keys ("widget:<kind>:..."),
// never an API key's, through the leased limiter on the database; a
// refusal says when a message fits again; and a database that does not
// answer is Unavailable (503 with Retry-After), never an internal error.
func TestSharedLimits(t *testing.T) {
	ctx := context.Background()
	dbs := storetest.Handles(t, 2) // the widget's stores; the limiter's (closed below)
	org := storetest.Org(t, dbs[0])
	conf, _ := json.Marshal(map[string]any{"allowedDomains": []string{"http://localhost:8123"}})
	a, err := dbs[0].Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "chat", Status: "active", Config: conf})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	log := &keyLog{Limits: access.NewLimiter(time.Minute, dbs[1].Orgs)}
	s := New(Deps{Agents: dbs[0].Agents, Store: dbs[0].Widget, Limits: log},
		Config{VisitorPerMinute: 1, DailyCap: 1, Now: func() time.Time { return now }})
	tok, err := s.token(ctx, Claims{OrgID: org, AgentID: a.ID, ConversationID: "conv1", First: now.Unix()})
	if err != nil {
		t.Fatal(err)
	}
	// The day's one message is used, so an admitted message stops at the
	// daily cap, before the engine.
	if r, err := dbs[0].Widget.CountMessage(ctx, a.ID, "192.0.2.1", now.Format(time.DateOnly), 1, 1); r != widgetstore.Counted || err != nil {
		t.Fatal(r, err)
	}
	_, err = s.Send(ctx, tok, "conv1", "http://localhost:8123", "192.0.2.7", "hi", nil)
	var le *LimitError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "today") {
		t.Fatalf("first message: %v", err)
	}
	if want := []string{"widget:visitor:conv1", "widget:addr:192.0.2.7"}; !slices.Equal(log.keys, want) {
		t.Fatalf("keys %q, want %q", log.keys, want)
	}
	_, err = s.Send(ctx, tok, "conv1", "http://localhost:8123", "192.0.2.7", "hi", nil)
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "too many messages") || le.RetryAfter <= 0 || le.RetryAfter > 61*time.Second {
		t.Fatalf("second message: %v", err)
	}

	dbs[1].Close() // the database stops answering the limiter
	tok2, err := s.token(ctx, Claims{OrgID: org, AgentID: a.ID, ConversationID: "conv2", First: now.Unix()})
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"message": func() error {
			_, err := s.Send(ctx, tok2, "conv2", "http://localhost:8123", "192.0.2.8", "hi", nil)
			return err
		},
		"session": func() error { _, err := s.Start(ctx, a.ID, "http://localhost:8123", "192.0.2.8"); return err },
	} {
		err := call()
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Unavailable || errors.As(err, &le) {
			t.Fatalf("%s with the database away: %v", name, err)
		}
	}
}
