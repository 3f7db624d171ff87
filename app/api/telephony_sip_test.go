package api

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/dial/sipdial"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// sipDialer runs the server with --dialer sip against trunk.
func sipDialer(trunk string, cps float64, maxConcurrent int) func(*serveConfig) {
	return func(c *serveConfig) {
		c.Calls = calls.Config{Dialer: "sip", DialCPS: cps, MaxConcurrent: maxConcurrent,
			Poll: 100 * time.Millisecond, Lease: 5 * time.Second, Drain: 2 * time.Second,
			Telephony: calls.TelephonyConfig{SIP: sipdial.Config{Trunk: trunk, RingTimeout: 10 * time.Second}}}
	}
}

// The walkthrough: a call placed through POST /api/v1/calls/outbound
// against a real sipp callee shows queued -> connecting -> ringing -> active
// -> completed on GET /api/v1/calls/{id}. The scenario waits 400 ms before
// ringing, rings 1 s and talks 1.5 s, so each status lasts long enough to be
// seen by a 20 ms poll.
func TestTelephonySIPStatusWalkthrough(t *testing.T) {
	sp := sipptest.Start(t, "telephony_walkthrough", sipptest.Options{})
	e := newTestEnv(t, sipDialer(sp.Addr, 5, 10))
	agent := e.voiceAgent(e.orgID)

	id := e.outbound(e.key, agent.ID, "+14155550100") // fails unless the answer says queued
	seen := []string{"queued"}
	var last callView
	// Sampling every status the call passes through, not waiting for
	// one: a steady 20 ms poll (no event reports each transition here).
	if !testkit.WithinEvery(15*time.Second, 20*time.Millisecond, func() bool {
		last = e.getCall(e.key, id)
		if last.Status != seen[len(seen)-1] {
			seen = append(seen, last.Status)
		}
		return last.Status == "completed" || strings.Contains("failed busy no_answer cancelled", last.Status)
	}) {
		t.Fatalf("call still %s after 15 s; seen %v", last.Status, seen)
	}
	t.Logf("statuses seen: %s", strings.Join(seen, " -> "))
	if got, want := strings.Join(seen, " -> "), "queued -> connecting -> ringing -> active -> completed"; got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	if last.Duration == nil || *last.Duration < 1.3 || *last.Duration > 2.5 {
		t.Errorf("duration %v, want about 1.5 s (the scenario's talk time)", last.Duration)
	}
	if last.SIPParticipantID == nil || *last.SIPParticipantID == "" {
		t.Error("sipParticipantId (the SIP Call-ID) not shown")
	}
	if len(last.AttemptHistory) != 1 || last.AttemptHistory[0].Status != "completed" {
		t.Errorf("attempt history %+v", last.AttemptHistory)
	}
	var raw struct {
		Data struct {
			Dialer     *string `json:"dialer"`
			AnsweredAt *string `json:"answeredAt"`
		}
	}
	e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &raw)
	if raw.Data.Dialer == nil || *raw.Data.Dialer != "sip" || raw.Data.AnsweredAt == nil {
		t.Errorf("dialer %v answeredAt %v", raw.Data.Dialer, raw.Data.AnsweredAt)
	}
	if n := len(sp.Invites(t)); n != 1 {
		t.Errorf("sipp received %d INVITEs, want 1", n)
	}
	// The LiveKit webhook is not served by a sip server.
	if code, _, body := e.do("POST", "/api/v1/telephony/livekit/webhook", "", map[string]any{"event": "room_finished"}); code != http.StatusNotFound {
		t.Errorf("webhook with --dialer sip: %d %s", code, body)
	}
}

// The dial queue keeps its pacing with the real SIP dialer: 20 calls at
// --dial-cps 5 (concurrency 20, so only the rate limits) reach sipp over
// 4 s: first INVITE at 0, the 20th at 3.8 s, i.e. 20 call slots of 0.2 s.
// Measured twice: from sipp's own message trace (when the INVITEs arrived)
// and from the attempts' claim times in the database (never closer than
// 1/cps).
func TestTelephonySIPPacing(t *testing.T) {
	if testing.Short() {
		t.Skip("5 s of real-time pacing; run by the full go test ./... (CI's race step uses -short)")
	}
	const calls, cps = 20, 5.0
	sp := sipptest.Start(t, "answer_hangup", sipptest.Options{})
	e := newTestEnv(t, sipDialer(sp.Addr, cps, calls))
	agent := e.voiceAgent(e.orgID)

	// Posted one after another: all are queued long before the queue's
	// pacing reaches them (a POST takes milliseconds, a slot 200 ms).
	ids := make([]string, calls)
	for i := range ids {
		ids[i] = e.outbound(e.key, agent.ID, phoneWith("0100", i))
	}

	var claims []time.Time
	for _, id := range ids {
		c := e.waitFinal(e.key, id, 20*time.Second)
		if c.Status != "completed" {
			t.Fatalf("call %s: %s (%v)", id, c.Status, c.FailureReason)
		}
		var raw struct {
			Data struct {
				AttemptHistory []struct{ StartedAt string } `json:"attemptHistory"`
			}
		}
		e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &raw)
		at, err := time.Parse(time.RFC3339Nano, raw.Data.AttemptHistory[0].StartedAt)
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, at)
	}
	sort.Slice(claims, func(i, j int) bool { return claims[i].Before(claims[j]) })
	interval := time.Duration(float64(time.Second) / cps)
	for i := 1; i < len(claims); i++ {
		if gap := claims[i].Sub(claims[i-1]); gap < interval-5*time.Millisecond {
			t.Errorf("claims %d and %d only %v apart (1/cps = %v)", i-1, i, gap, interval)
		}
	}

	inv := sp.Invites(t)
	if len(inv) != calls {
		t.Fatalf("sipp received %d INVITEs, want %d", len(inv), calls)
	}
	span := inv[len(inv)-1].Sub(inv[0])
	took := span + interval // 20 slots of 1/cps: the 20th call's slot ends at 4 s
	t.Logf("20 calls at %g cps: INVITEs at sipp span %v (first to 20th), %v with the last slot; claims span %v",
		cps, span.Round(time.Millisecond), took.Round(time.Millisecond), claims[len(claims)-1].Sub(claims[0]))
	if took < 3700*time.Millisecond || took > 4300*time.Millisecond {
		t.Errorf("20 calls at 5 cps took %v to dial, want 4 s +- 0.3 s", took)
	}
}
