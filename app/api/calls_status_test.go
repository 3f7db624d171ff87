package api

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit"
)

// Every status path through the real server and the sim dialer.

func TestCallOutcomesThroughSim(t *testing.T) {
	e := newTestEnv(t, fastSim(150*time.Millisecond))
	agent := e.voiceAgent(e.orgID)
	cases := []struct {
		phone, status, reason string
	}{
		{"+14155550100", "completed", ""},
		{"+14155550486", "busy", ""},
		{"+14155550408", "no_answer", ""},
		{"+14155550500", "failed", dial.SimFailureReason},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = e.outbound(e.key, agent.ID, c.phone)
	}
	for i, c := range cases {
		got := e.waitFinal(e.key, ids[i], 5*time.Second)
		if got.Status != c.status {
			t.Errorf("%s: status %s, want %s", c.phone, got.Status, c.status)
		}
		if got.Attempts != 1 || len(got.AttemptHistory) != 1 || got.AttemptHistory[0].Status != c.status {
			t.Errorf("%s: attempts %d history %+v", c.phone, got.Attempts, got.AttemptHistory)
		}
		if c.reason != "" && (got.FailureReason == nil || *got.FailureReason != c.reason) {
			t.Errorf("%s: failure_reason %v, want %q", c.phone, got.FailureReason, c.reason)
		}
		if c.status != "failed" && got.FailureReason != nil {
			t.Errorf("%s: failure_reason %q on a %s call", c.phone, *got.FailureReason, got.Status)
		}
		if got.RoomID == nil || got.JobID == nil || got.SIPParticipantID == nil {
			t.Errorf("%s: telephony ids missing: %+v", c.phone, got)
		}
		if c.status == "completed" {
			if got.Duration == nil || *got.Duration != 0.15 || got.Summary == nil || *got.Summary == "" {
				t.Errorf("completed call: duration %v summary %v", got.Duration, got.Summary)
			}
		}
	}
}

func TestCancelScheduledCallNeverDials(t *testing.T) {
	e := newTestEnv(t, fastSim(100*time.Millisecond))
	agent := e.voiceAgent(e.orgID)
	at := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	var out struct{ Data struct{ ID, Status string } }
	if code := e.doJSON("POST", "/api/v1/calls/schedule", e.key, map[string]any{
		"agentId": agent.ID, "contactPhone": "+14155550100", "scheduledAt": at}, &out); code != 201 || out.Data.Status != "initiated" {
		t.Fatalf("schedule: %d %+v", code, out)
	}
	e.waitCall(e.key, out.Data.ID, 2*time.Second, func(c callView) bool { return c.Status == "scheduled" })
	var del struct{ Data callView }
	if code := e.doJSON("DELETE", "/api/v1/calls/"+out.Data.ID, e.key, nil, &del); code != 200 || del.Data.Status != "cancelled" {
		t.Fatalf("cancel: %d %+v", code, del)
	}
	// The check is that nothing happens at the due time (the cancelled call
	// is not dialled): no event marks a non-event, so the clock must pass it.
	testkit.Never(t, 2*time.Second, func() bool {
		got := e.getCall(e.key, out.Data.ID)
		return got.Status != "cancelled" || got.Attempts != 0 || len(got.AttemptHistory) != 0
	}, "the cancelled call changed before or at its due time")
	// A finished call cannot be cancelled again.
	code, _, body := e.do("DELETE", "/api/v1/calls/"+out.Data.ID, e.key, nil)
	if code != 409 {
		t.Fatalf("second cancel: %d %s", code, body)
	}
}

func TestCancelActiveCallHangsUp(t *testing.T) {
	e := newTestEnv(t, fastSim(30*time.Second))
	agent := e.voiceAgent(e.orgID)
	id := e.outbound(e.key, agent.ID, "+14155550100")
	e.waitCall(e.key, id, 5*time.Second, func(c callView) bool { return c.Status == "active" })
	// "active" is stored before the sim dialer enters its talk wait; the
	// hang-up must find it there, and the dialer shows no event for that.
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	var del struct {
		Data    callView
		Message string
	}
	if code := e.doJSON("DELETE", "/api/v1/calls/"+id, e.key, nil, &del); code != 200 || del.Data.Status != "cancelled" {
		t.Fatalf("cancel: %d %+v", code, del)
	}
	if del.Message != "Call cancelled and hung up" {
		t.Errorf("message %q", del.Message)
	}
	// The cancel answers at once; the hung-up dial then records the talk time.
	got := e.waitCall(e.key, id, 2*time.Second, func(c callView) bool {
		return len(c.AttemptHistory) == 1 && c.AttemptHistory[0].Status == "cancelled" && c.Duration != nil
	})
	if time.Since(start) > time.Second {
		t.Errorf("hang-up took %s", time.Since(start))
	}
	if got.Status != "cancelled" || got.Duration == nil || *got.Duration <= 0 {
		t.Fatalf("cancelled call: %+v", got)
	}
}

// flakyDialer is busy for the first `busy` attempts of each call, then
// completes; it records every attempt it was asked to dial.
type flakyDialer struct {
	busy int
	mu   sync.Mutex
	seen map[string][]int
}

func (f *flakyDialer) Name() string { return "flaky" }

func (f *flakyDialer) Dial(ctx context.Context, c dial.Call, p func(dial.Progress)) (dial.Result, error) {
	f.mu.Lock()
	f.seen[c.ID] = append(f.seen[c.ID], c.Attempt)
	f.mu.Unlock()
	p(dial.Progress{Status: dial.StatusConnecting, RoomID: "room-" + c.ID})
	if c.Attempt <= f.busy {
		return dial.Result{Status: dial.StatusBusy, SIPCode: 486}, nil
	}
	p(dial.Progress{Status: dial.StatusActive})
	return dial.Result{Status: dial.StatusCompleted, Duration: time.Second, Summary: "ok"}, nil
}

func TestRetriedTwiceThenCompleted(t *testing.T) {
	fd := &flakyDialer{busy: 2, seen: map[string][]int{}}
	e := newTestEnv(t, fastSim(0), func(c *serveConfig) { c.Calls.DialerImpl = fd })
	agent := e.voiceAgent(e.orgID)
	var out struct{ Data struct{ ID string } }
	// Intervals of 0.005 minutes (300 ms) between attempts.
	code := e.doJSON("POST", "/api/v1/calls/schedule", e.key, map[string]any{
		"agentId": agent.ID, "contactPhone": "+14155550100",
		"retryIntervals": []map[string]any{{"value": 0.005, "unit": "minutes"}, {"value": 0.005, "unit": "minutes"}},
	}, &out)
	if code != 201 {
		t.Fatalf("schedule: %d", code)
	}
	got := e.waitFinal(e.key, out.Data.ID, 10*time.Second)
	if got.Status != "completed" || got.Attempts != 3 || got.MaxRetries != 2 || len(got.AttemptHistory) != 3 {
		t.Fatalf("call: %+v", got)
	}
	// From the attempts' own start times: the first may have run before
	// the POST's answer came back (timed from then, a loaded run measured
	// 566 ms).
	if el := got.AttemptHistory[2].StartedAt.Sub(got.AttemptHistory[0].StartedAt); el < 600*time.Millisecond {
		t.Errorf("three attempts with two 300 ms waits started within %s", el)
	}
	want := []string{"busy", "busy", "completed"}
	for i, a := range got.AttemptHistory {
		if a.Attempt != i+1 || a.Status != want[i] {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
	}
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if s := fd.seen[got.ID]; len(s) != 3 || s[0] != 1 || s[1] != 2 || s[2] != 3 {
		t.Errorf("dialled attempts %v", s)
	}
}

func TestNoRetryConfigNoRetry(t *testing.T) {
	fd := &flakyDialer{busy: 5, seen: map[string][]int{}}
	e := newTestEnv(t, fastSim(0), func(c *serveConfig) { c.Calls.DialerImpl = fd })
	agent := e.voiceAgent(e.orgID)
	id := e.outbound(e.key, agent.ID, "+14155550100")
	got := e.waitFinal(e.key, id, 5*time.Second)
	if got.Status != "busy" || got.Attempts != 1 {
		t.Fatalf("call: %+v", got)
	}
}

func TestDialerNone(t *testing.T) {
	e := newTestEnv(t, func(c *serveConfig) { c.Calls = calls.Config{Poll: 50 * time.Millisecond} })
	agent := e.voiceAgent(e.orgID)
	code, _, body := e.do("POST", "/api/v1/calls/outbound", e.key, map[string]any{"agentId": agent.ID, "phoneNumber": "+14155550100"})
	if code != 500 || string(body) != `{"error":{"code":500,"message":"telephony service not configured"}}`+"\n" {
		t.Fatalf("outbound: %d %s", code, body)
	}
	// A scheduled call is accepted and fails at dial time with that reason.
	var out struct{ Data struct{ ID string } }
	if code := e.doJSON("POST", "/api/v1/calls/schedule", e.key, map[string]any{"agentId": agent.ID, "contactPhone": "+14155550100"}, &out); code != 201 {
		t.Fatalf("schedule: %d", code)
	}
	got := e.waitFinal(e.key, out.Data.ID, 5*time.Second)
	if got.Status != "failed" || got.FailureReason == nil || *got.FailureReason != "telephony service not configured" {
		t.Fatalf("call: %+v", got)
	}
}
