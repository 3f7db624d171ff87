package calls_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
)

// The calls use cases below HTTP, on the engine storetest picks (SQLite,
// or PostgreSQL with AGENTD_TEST_POSTGRES): the API tests keep the status
// codes and shapes; these keep the rules.

// fixture is a service over fresh stores with one organization and a
// voice agent that has a number.
type fixture struct {
	db    *storage.Stores
	svc   *calls.Service
	org   string
	agent string
	ctx   context.Context
}

func newFixture(t *testing.T, cfg calls.Config) *fixture {
	t.Helper()
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "voice", Type: "voice", Status: "active",
		PhoneNumbers: []string{"+14155550100"}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := calls.New(calls.Deps{Calls: db.Calls, Agents: db.Agents}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return &fixture{db: db, svc: svc, org: org, agent: a.ID, ctx: ctx}
}

// run runs the service's workers (scheduler, dial queue) until the test ends.
func (f *fixture) run(t *testing.T) {
	ctx, cancel := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	for _, w := range f.svc.Workers() {
		wg.Add(1)
		go func() { defer wg.Done(); w(ctx) }()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func (f *fixture) caller() calls.Caller { return calls.Caller{OrgID: f.org} }

func (f *fixture) outbound(t *testing.T, phone string) calls.Queued {
	t.Helper()
	q, err := f.svc.Outbound(f.ctx, f.caller(), calls.OutboundRequest{AgentID: &f.agent, PhoneNumber: &phone})
	if err != nil {
		t.Fatalf("outbound %s: %v", phone, err)
	}
	return q
}

func (f *fixture) status(t *testing.T, id string) string {
	t.Helper()
	r, err := f.svc.Get(f.ctx, f.org, id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
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

// An outbound call is stored queued, dialled by the queue (the simulator
// answers) and ends completed; its result is then recorded on it.
func TestOutboundDialledAndResult(t *testing.T) {
	f := newFixture(t, calls.Config{Dialer: "sim", SimRing: -1, SimTalk: 20 * time.Millisecond, DialCPS: 100,
		Poll: 50 * time.Millisecond})
	q := f.outbound(t, "+14155550123")
	if q.Status != "queued" || q.AgentID != f.agent || q.PhoneNumber != "+14155550123" {
		t.Fatalf("queued %+v", q)
	}
	f.run(t)
	testkit.Eventually(t, 10*time.Second, func() bool { return f.status(t, q.ID) == "completed" }, "call %s completed", q.ID)
	rec, msg, err := f.svc.RecordResult(f.ctx, f.org, q.ID, calls.ResultRequest{Summary: ptr("booked"), Outcome: ptr("interested"),
		Metadata: &map[string]any{"score": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if msg != "Call result recorded" || rec.Summary == nil || *rec.Summary != "booked" || rec.Attempts != 1 {
		t.Fatalf("result %q %+v", msg, rec)
	}
	var meta struct{ Result map[string]any }
	if err := json.Unmarshal(rec.Metadata, &meta); err != nil || meta.Result["score"] != float64(3) {
		t.Fatalf("metadata %s (%v)", rec.Metadata, err)
	}
}

// Bad input and a wrong agent are refused with the field named, and
// nothing is stored.
func TestOutboundRefused(t *testing.T) {
	f := newFixture(t, calls.Config{Dialer: "sim"})
	chat, err := f.db.Agents.CreateAgent(f.ctx, agentstore.Agent{OrgID: f.org, Name: "chat", Type: "chat", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, agent, phone string
		kind, field        string
	}{
		{"bad phone", f.agent, "555-0100", "invalid", "phoneNumber"},
		{"unknown agent", "00000000-0000-4000-8000-000000000000", "+14155550123", "not found", "agentId"},
		{"chat agent", chat.ID, "+14155550123", "invalid", "agentId"},
	} {
		_, err := f.svc.Outbound(f.ctx, f.caller(), calls.OutboundRequest{AgentID: &c.agent, PhoneNumber: &c.phone})
		if k, fld := kindOf(err); k != c.kind || fld != c.field {
			t.Errorf("%s: %v (kind %q field %q), want %s on %s", c.name, err, k, fld, c.kind, c.field)
		}
	}
	none := newFixture(t, calls.Config{}) // no dialer: the contract's 500 "telephony service not configured"
	phone := "+14155550123"
	if _, err := none.svc.Outbound(none.ctx, none.caller(), calls.OutboundRequest{AgentID: &none.agent, PhoneNumber: &phone}); !isKind(err, "internal") {
		t.Errorf("without a dialer: %v", err)
	}
	page, err := f.svc.List(f.ctx, f.org, calls.ListOptions{Limit: 10})
	if err != nil || page.Pagination.Total != 0 {
		t.Fatalf("stored after refusals: %+v %v", page.Pagination, err)
	}
}

// A waiting call is cancelled once; cancelling it again, or recording a
// result before any attempt, is a conflict.
func TestCancelAndResultConflicts(t *testing.T) {
	f := newFixture(t, calls.Config{Dialer: "sim"}) // workers not run: the call stays queued
	q := f.outbound(t, "+14155550123")
	if _, _, err := f.svc.RecordResult(f.ctx, f.org, q.ID, calls.ResultRequest{Summary: ptr("x")}); !isKind(err, "conflict") {
		t.Fatalf("result before an attempt: %v", err)
	}
	rec, msg, err := f.svc.Cancel(f.ctx, f.org, q.ID)
	if err != nil || rec.Status != "cancelled" || msg != "Call cancelled" {
		t.Fatalf("cancel: %+v %q %v", rec, msg, err)
	}
	if _, _, err := f.svc.Cancel(f.ctx, f.org, q.ID); !isKind(err, "conflict") {
		t.Fatalf("second cancel: %v", err)
	}
	if _, _, err := f.svc.Cancel(f.ctx, "another-org", q.ID); !isKind(err, "not found") {
		t.Fatalf("another organization's call: %v", err)
	}
}

func isKind(err error, kind string) bool { k, _ := kindOf(err); return k == kind }

// A batch schedules its good items and reports the bad one by index; the
// batch is listed with its counts, and cancelling it cancels its calls.
func TestBatchScheduleAndCancel(t *testing.T) {
	f := newFixture(t, calls.Config{})
	at := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	items := []json.RawMessage{
		json.RawMessage(`{"contactPhone":"+14155550101"}`),
		json.RawMessage(`{"contactPhone":"not a number"}`),
		json.RawMessage(`{"contactPhone":"+14155550102","priority":1}`),
	}
	out, err := f.svc.Batch(f.ctx, f.caller(), calls.BatchRequest{AgentID: &f.agent, Calls: items,
		DefaultScheduledAt: &at, Name: ptr("spring")})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Data.Summary
	if s.Successful != 2 || s.Failed != 1 || !s.PartialSuccess || out.Data.BatchID == "" {
		t.Fatalf("summary %+v batch %q", s, out.Data.BatchID)
	}
	if r := out.Data.Results[1]; r.Success || r.Index != 1 || r.Error == "" {
		t.Fatalf("bad item %+v", r)
	}
	b, err := f.svc.GetBatch(f.ctx, f.org, out.Data.BatchID)
	if err != nil || b.Name != "spring" || b.Total != 2 {
		t.Fatalf("batch %+v %v", b, err)
	}
	v, msg, err := f.svc.CancelBatch(f.ctx, f.org, out.Data.BatchID)
	if err != nil || v.Counts.Cancelled != 2 {
		t.Fatalf("cancel batch %+v %q %v", v.Counts, msg, err)
	}
	for _, r := range []calls.BatchResult{out.Data.Results[0], out.Data.Results[2]} {
		if st := f.status(t, r.CallID); st != "cancelled" {
			t.Errorf("call %s %s after the batch's cancel", r.CallID, st)
		}
	}
}
