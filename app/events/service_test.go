package events_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
)

// The events use cases below HTTP (endpoints, the log, deliveries and the
// delivery worker's claims), on the engine storetest picks: SQLite, or
// PostgreSQL with AGENTD_TEST_POSTGRES.

func deps(db *storage.Stores) events.Deps {
	return events.Deps{Webhooks: db.Webhooks, Events: db.Events}
}

// kindOf reads the Kind and Field of the feature error in err's chain,
// by name: the errs package moves under internal/ in this same issue.
func kindOf(err error) (kind, field string) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		v := reflect.Indirect(reflect.ValueOf(e))
		if v.Kind() == reflect.Struct && v.FieldByName("Kind").IsValid() && v.FieldByName("Field").IsValid() {
			return fmt.Sprint(v.FieldByName("Kind").Interface()), v.FieldByName("Field").String()
		}
	}
	return "", ""
}

func ptr[T any](v T) *T { return &v }

// An endpoint is created with its secret shown once, checked on input,
// updated, rotated (the old secret keeps signing for the overlap) and
// deleted.
func TestWebhookEndpoints(t *testing.T) {
	db, org := storetest.WithOrg(t)
	svc, ctx := events.New(deps(db), nil), context.Background()
	for _, c := range []struct {
		in    events.Input
		field string
	}{
		{events.Input{URL: ptr("ftp://x.example/h"), Events: &[]string{"*"}}, "url"},
		{events.Input{URL: ptr("https://x.example/h"), Events: &[]string{"no.such.type"}}, "events"},
		{events.Input{Events: &[]string{"*"}}, "url"},
	} {
		if _, err := svc.Create(ctx, org, c.in); func() bool { k, f := kindOf(err); return k != "invalid" || !strings.HasPrefix(f, c.field) }() {
			t.Errorf("create %+v: %v, want invalid %s", c.in, err, c.field)
		}
	}
	if l, err := svc.List(ctx, org); err != nil || len(l) != 0 {
		t.Fatalf("stored after refusals: %v %v", l, err)
	}
	w, err := svc.Create(ctx, org, events.Input{URL: ptr("https://x.example/h"), Events: &[]string{"call.ended", "call.ended"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Secret, "whsec_") || len(w.Events) != 1 || !w.Enabled {
		t.Fatalf("created %+v", w)
	}
	up, err := svc.Update(ctx, org, w.ID, events.Input{Events: &[]string{"*"}, Description: ptr("all")})
	if err != nil || up.Events[0] != "*" || up.Description != "all" || up.URL != w.URL {
		t.Fatalf("update %+v %v", up, err)
	}
	rot, err := svc.RotateSecret(ctx, org, w.ID)
	if err != nil || rot.Secret == w.Secret || rot.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotate %+v %v", rot, err)
	}
	if _, err := svc.Get(ctx, "another-org", w.ID); func() bool { k, _ := kindOf(err); return k != "not found" }() {
		t.Fatalf("another organization's endpoint: %v", err)
	}
	if err := svc.Delete(ctx, org, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, org, w.ID); func() bool { k, _ := kindOf(err); return k != "not found" }() {
		t.Fatalf("deleted endpoint: %v", err)
	}
}

// sender is a receiver in the test: it answers each post with the next
// status of codes (the last one repeats) and counts the posts per event.
type sender struct {
	mu    sync.Mutex
	codes []int
	posts map[string]int // webhook-id -> posts
}

func (s *sender) Post(ctx context.Context, url string, header map[string]string, body []byte) (int, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.posts == nil {
		s.posts = map[string]int{}
	}
	s.posts[header["webhook-id"]]++
	code := s.codes[0]
	if len(s.codes) > 1 {
		s.codes = s.codes[1:]
	}
	return code, []byte("ok"), nil
}

func (s *sender) count() (events, posts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.posts {
		events, posts = events+1, posts+n
	}
	return events, posts
}

func runWorker(t *testing.T, cfg events.WorkerConfig) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := events.NewWorker(cfg)
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// A ping is logged, claimed, sent and recorded; a failed attempt is
// retried on the schedule and its history kept.
func TestDeliveryRetriedThenSucceeds(t *testing.T) {
	db, org := storetest.WithOrg(t)
	svc, ctx := events.New(deps(db), nil), context.Background()
	w, err := svc.Create(ctx, org, events.Input{URL: ptr("https://x.example/h"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := svc.Test(ctx, org, w.ID)
	if err != nil || ev.Type != "ping" {
		t.Fatalf("ping %+v %v", ev, err)
	}
	page, err := svc.ListEvents(ctx, org, events.Query{Types: []string{"ping"}})
	if err != nil || len(page.Events) != 1 || page.Events[0].ID != ev.ID {
		t.Fatalf("log %+v %v", page, err)
	}
	rcv := &sender{codes: []int{500, 200}}
	runWorker(t, events.WorkerConfig{DB: deps(db), Sender: rcv, Poll: 20 * time.Millisecond,
		Schedule: []time.Duration{10 * time.Millisecond}})
	var d events.Delivery
	testkit.Eventually(t, 10*time.Second, func() bool {
		p, err := svc.Deliveries(ctx, org, w.ID, events.DeliveryQuery{EventID: ev.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Deliveries) == 1 {
			d = p.Deliveries[0]
		}
		return d.Status == "succeeded"
	}, "ping delivered after one failure (last seen %+v)", &d)
	h := d.AttemptHistory
	if d.Attempts != 2 || len(h) != 2 || h[0].Status != "failed" || *h[0].ResponseCode != 500 || h[1].Status != "succeeded" {
		t.Fatalf("delivery %+v", d)
	}
}

// Two processes' workers share one database: every delivery is claimed by
// one of them and sent once.
func TestWorkersShareClaims(t *testing.T) {
	dbs := storetest.Handles(t, 2)
	org := storetest.Org(t, dbs[0])
	svc, ctx := events.New(deps(dbs[0]), nil), context.Background()
	w, err := svc.Create(ctx, org, events.Input{URL: ptr("https://x.example/h"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	rcv := &sender{codes: []int{200}}
	for _, db := range dbs {
		runWorker(t, events.WorkerConfig{DB: deps(db), Sender: rcv, Poll: 20 * time.Millisecond, Concurrency: 4})
	}
	for range n {
		if _, err := events.New(deps(dbs[1]), nil).Test(ctx, org, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 20*time.Second, func() bool { e, _ := rcv.count(); return e == n }, "%d pings delivered", n)
	p, err := svc.Deliveries(ctx, org, w.ID, events.DeliveryQuery{Status: "succeeded", Limit: 100})
	if err != nil || len(p.Deliveries) != n {
		t.Fatalf("%d succeeded deliveries (%v), want %d", len(p.Deliveries), err, n)
	}
	if e, posts := rcv.count(); posts != n {
		t.Fatalf("%d posts for %d events: a delivery was sent twice", posts, e)
	}
}
