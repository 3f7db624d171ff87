package api

import (
	"strings"
	"testing"
	"time"
)

// The voice agent reports voicemail: the call is retried (retryOnVoicemail
// defaults to true), whether the report came during the call or after it
// ended, and the waiting call shows its due time in scheduledAt. An opt-out
// puts the number on the do-not-call list at once, which fails the retry.
func TestResultVoicemailAndOptOut(t *testing.T) {
	e := newTestEnv(t, fastSim(time.Second))
	agent := e.voiceAgent(e.orgID)
	schedule := func(phone string) string {
		var out struct{ Data struct{ ID string } }
		if code := e.doJSON("POST", "/api/v1/calls/schedule", e.key, map[string]any{"agentId": agent.ID, "contactPhone": phone,
			"retryIntervals": []map[string]any{{"value": 1, "unit": "hours"}}}, &out); code != 201 {
			t.Fatalf("schedule: %d", code)
		}
		return out.Data.ID
	}
	result := func(id string, body map[string]any) string {
		var out struct {
			Data    callView
			Message string
		}
		if code := e.doJSON("POST", "/api/v1/calls/"+id+"/result", e.key, body, &out); code != 200 {
			t.Fatalf("result %v: %d %+v", body, code, out)
		}
		return out.Message
	}
	waiting := func(id string) callView {
		return e.waitCall(e.key, id, 10*time.Second, func(c callView) bool { return c.Status == "scheduled" && c.Attempts == 1 })
	}

	// Reported while the call is live: the dial queue retries it when it ends.
	during := schedule("+14155550601")
	e.waitCall(e.key, during, 10*time.Second, func(c callView) bool { return c.Status == "active" })
	result(during, map[string]any{"outcome": "voicemail"})
	c := waiting(during)
	if c.LastOutcome == nil || *c.LastOutcome != "voicemail" || c.ScheduledAt == nil || c.NextAttemptAt == nil ||
		*c.ScheduledAt != *c.NextAttemptAt || c.AttemptHistory[0].Status != "voicemail" {
		t.Fatalf("voicemail during the call: %+v", c)
	}

	// Reported after the call ended completed.
	after := schedule("+14155550602")
	e.waitFinal(e.key, after, 10*time.Second)
	if msg := result(after, map[string]any{"outcome": "voicemail"}); !strings.Contains(msg, "retried at") {
		t.Fatalf("message %q", msg)
	}
	waiting(after)

	// An opt-out lists the number and fails the waiting retry.
	if msg := result(after, map[string]any{"optOut": true}); !strings.Contains(msg, "do-not-call list") {
		t.Fatalf("message %q", msg)
	}
	c = e.getCall(e.key, after)
	if c.Status != "failed" || *c.FailureReason != "do_not_call" {
		t.Fatalf("after opt-out: %+v", c)
	}
	var page dncPage
	if e.doJSON("GET", "/api/v1/dnc?phoneNumber=%2B14155550602", e.key, nil, &page); page.Data.Pagination.Total != 1 ||
		!strings.Contains(*page.Data.Numbers[0].Reason, after) {
		t.Fatalf("listed: %+v", page)
	}
}
