package widget

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
)

const page = "https://shop.example.com:443"

// bench is the widget on the real conversation engine and stores (SQLite,
// or PostgreSQL under AGENTD_TEST_POSTGRES), answering with the scripted
// model (builtin when model is nil), its clock the test's.
type bench struct {
	t   *testing.T
	db  *storage.Stores
	org string
	w   *Service
	now time.Time
}

func newBench(t *testing.T, model *llmtest.Server, cfg Config) *bench {
	t.Helper()
	db, org := storetest.WithOrg(t)
	var m llm.Model
	if model != nil {
		var err error
		if m, err = llm.New(llm.Config{Kind: "openai", URL: model.URL, Model: "scripted", Timeout: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	conv, err := conversations.New(conversations.Deps{Agents: db.Agents, Store: db.Conversations}, conversations.Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{t: t, db: db, org: org, now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	cfg.Now = func() time.Time { return b.now }
	b.w = New(Deps{Agents: db.Agents, Conv: conv, Store: db.Widget}, cfg)
	return b
}

func (b *bench) agent(perDay int) string {
	b.t.Helper()
	conf, _ := json.Marshal(map[string]any{"allowedDomains": []string{"shop.example.com"}, "maxMessagesPerDay": perDay})
	a, err := b.db.Agents.CreateAgent(context.Background(), agentstore.Agent{OrgID: b.org, Name: "a", Type: "chat", Status: "active", Config: conf})
	if err != nil {
		b.t.Fatal(err)
	}
	return a.ID
}

func (b *bench) session(agentID string) Session {
	b.t.Helper()
	s, err := b.w.Start(context.Background(), agentID, page, "192.0.2.1")
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

func (b *bench) send(ctx context.Context, s Session, addr string) error {
	_, err := b.w.Send(ctx, s.Token, s.ConversationID, page, addr, "When do you open?", nil)
	return err
}

// refusal is the message of a 429, "" for anything else.
func refusal(err error) string {
	var le *LimitError
	if errors.As(err, &le) {
		return le.Err.Message
	}
	return ""
}

// The day's count is taken before the model is asked and never given
// back: N visitors who go away while the model works leave the counter
// at N (the model saw N requests), and so does a model that fails.
func TestCapCountedBeforeTheModel(t *testing.T) {
	model := llmtest.New(t)
	b := newBench(t, model, Config{})
	const n = 3
	agent := b.agent(n)
	for i := range n {
		model.Push(llmtest.Reply{Content: "We open at seven.", Delay: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			testkit.Within(10*time.Second, func() bool { return model.Requests.Load() > int64(i) })
			cancel() // the visitor goes away while the model works
		}()
		if err := b.send(ctx, b.session(agent), "192.0.2.1"); !errors.Is(err, context.Canceled) {
			t.Fatalf("message %d: %v", i, err)
		}
		cancel()
	}
	if err := b.send(context.Background(), b.session(agent), "192.0.2.1"); !strings.Contains(refusal(err), "messages for today") {
		t.Fatalf("message %d of a cap of %d: %v", n+1, n, err)
	}
	if got := model.Requests.Load(); got != n {
		t.Fatalf("the model saw %d requests for %d messages", got, n)
	}

	failing := b.agent(1)
	model.Push(llmtest.Reply{Status: 500})
	if err := b.send(context.Background(), b.session(failing), "192.0.2.1"); refusal(err) != "" || err == nil {
		t.Fatalf("the model failing: %v", err)
	}
	if err := b.send(context.Background(), b.session(failing), "192.0.2.1"); !strings.Contains(refusal(err), "messages for today") {
		t.Fatalf("after a failed turn on a cap of 1: %v", err)
	}
}

// One address sends at most its share of the agent's day (10 %, at least
// 20); the others still get answers until the day itself is used up.
func TestAddressShare(t *testing.T) {
	b := newBench(t, nil, Config{VisitorPerMinute: 1000, AddressPerMinute: 1000})
	agent := b.agent(45)
	if AddressShare(45) != AddressShareMin || AddressShare(1000) != 100 || AddressShare(5) != 5 {
		t.Fatalf("shares %d %d %d", AddressShare(45), AddressShare(1000), AddressShare(5))
	}
	s := b.session(agent)
	for i := range AddressShareMin {
		if err := b.send(context.Background(), s, "198.51.100.7"); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	err := b.send(context.Background(), b.session(agent), "198.51.100.7")
	var le *LimitError
	if !errors.As(err, &le) || !strings.Contains(le.Err.Message, "share") || le.RetryAfter != 12*time.Hour {
		t.Fatalf("message %d of one address: %v", AddressShareMin+1, err)
	}
	for i := range 25 { // the rest of the day, from other addresses
		if err := b.send(context.Background(), s, "203.0.113."+strconv.Itoa(i)); err != nil {
			t.Fatalf("another address %d: %v", i, err)
		}
	}
	if err := b.send(context.Background(), s, "203.0.113.200"); !strings.Contains(refusal(err), "messages for today") {
		t.Fatalf("over the day: %v", err)
	}
	b.now = b.now.Add(12 * time.Hour) // the next UTC day
	if err := b.send(context.Background(), b.session(agent), "198.51.100.7"); err != nil {
		t.Fatalf("the next day: %v", err)
	}
}

// A visitor session lasts MaxVisitorLifetime from its first token,
// however often it is renewed: a renewal never reaches past it, and then
// the token is refused (the widget starts a new conversation).
func TestSessionLifetime(t *testing.T) {
	b := newBench(t, nil, Config{})
	agent := b.agent(100)
	s := b.session(agent)
	end := b.now.Add(MaxVisitorLifetime)
	tok := s.Token
	for b.now.Before(end) {
		h, err := b.w.History(context.Background(), tok, s.ConversationID, page)
		if err != nil {
			t.Fatalf("renewal at %s: %v", b.now, err)
		}
		k, _ := b.w.key(context.Background())
		c, err := verify(k, h.Token, b.now)
		if err != nil || time.Unix(c.Expires, 0).After(end) {
			t.Fatalf("renewed at %s until %s, past %s (%v)", b.now, time.Unix(c.Expires, 0), end, err)
		}
		tok = h.Token
		b.now = b.now.Add(DefaultTokenTTL - 10*time.Minute)
	}
	b.now = end
	_, err := b.w.History(context.Background(), tok, s.ConversationID, page)
	if e := (*errs.Error)(nil); !errors.As(err, &e) || e.Kind != errs.Unauthenticated {
		t.Fatalf("a renewed token at the session's end: %v", err)
	}
	if err := b.send(context.Background(), Session{Token: tok, ConversationID: s.ConversationID}, "192.0.2.1"); err == nil {
		t.Fatal("a message at the session's end was answered")
	}
}
