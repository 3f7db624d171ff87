package api

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// Helpers shared by the call tests: a server with the sim dialer on short
// timings, agents, and polling of a call until it settles.

// fastSim configures the sim dialer with short ring/talk times and a fast
// dial queue.
func fastSim(talk time.Duration) func(*serveConfig) {
	return func(c *serveConfig) {
		c.Calls = calls.Config{Dialer: "sim", SimRing: 30 * time.Millisecond, SimTalk: talk, DialCPS: 200,
			MaxConcurrent: 20, Poll: 100 * time.Millisecond, Lease: 2 * time.Second, Drain: time.Second}
	}
}

// voiceAgent creates an active voice agent with a phone number in the org:
// +15550001111 in the bootstrap organization, a number of its own in any
// other (a number belongs to one organization at a time).
func (e *testEnv) voiceAgent(orgID string, mod ...func(*agentstore.Agent)) agentstore.Agent {
	e.t.Helper()
	number := "+15550001111"
	if orgID != e.orgID {
		h := fnv.New32a()
		h.Write([]byte(orgID))
		number = fmt.Sprintf("+1555002%04d", h.Sum32()%10000)
	}
	a := agentstore.Agent{OrgID: orgID, Name: "Caller", Type: "voice", Status: "active",
		PhoneNumbers: []string{number}}
	for _, m := range mod {
		m(&a)
	}
	a, err := e.db.Agents.CreateAgent(context.Background(), a)
	if err != nil {
		e.t.Fatalf("create agent: %v", err)
	}
	return a
}

// callView is the part of a call record the tests read.
type callView struct {
	ID               string   `json:"id"`
	Status           string   `json:"status"`
	Attempts         int      `json:"attempts"`
	MaxRetries       int      `json:"maxRetries"`
	RoomID           *string  `json:"roomId"`
	JobID            *string  `json:"jobId"`
	SIPParticipantID *string  `json:"sipParticipantId"`
	Duration         *float64 `json:"duration"`
	Summary          *string  `json:"summary"`
	FailureReason    *string  `json:"failure_reason"`
	LastOutcome      *string  `json:"lastOutcome"`
	ScheduledAt      *string  `json:"scheduledAt"`
	NextAttemptAt    *string  `json:"nextAttemptAt"`
	Priority         int      `json:"priority"`
	PhoneNumber      string   `json:"phoneNumber"`
	Metadata         map[string]any
	AttemptHistory   []struct {
		Attempt       int       `json:"attempt"`
		Status        string    `json:"status"`
		FailureReason *string   `json:"failure_reason"`
		StartedAt     time.Time `json:"startedAt"`
	} `json:"attemptHistory"`
}

// getCall reads a call through the API.
func (e *testEnv) getCall(key, id string) callView {
	e.t.Helper()
	var out struct{ Data callView }
	if code := e.doJSON("GET", "/api/v1/calls/"+id, key, nil, &out); code != 200 {
		e.t.Fatalf("GET call %s: %d", id, code)
	}
	return out.Data
}

// waitCall polls the call until cond holds or the timeout passes.
func (e *testEnv) waitCall(key, id string, timeout time.Duration, cond func(callView) bool) callView {
	e.t.Helper()
	var c callView
	testkit.Eventually(e.t, timeout, func() bool { c = e.getCall(key, id); return cond(c) },
		"call %s: condition not met; last %+v", id, &c)
	return c
}

// waitFinal waits for a final status.
func (e *testEnv) waitFinal(key, id string, timeout time.Duration) callView {
	e.t.Helper()
	return e.waitCall(key, id, timeout, func(c callView) bool { return callstore.CallFinal(c.Status) })
}

// outbound places an outbound call and returns its id.
func (e *testEnv) outbound(key, agentID, phone string) string {
	e.t.Helper()
	var out struct {
		Data struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
	}
	code := e.doJSON("POST", "/api/v1/calls/outbound", key, map[string]any{"agentId": agentID, "phoneNumber": phone}, &out)
	if code != 201 || out.Data.Status != "queued" {
		e.t.Fatalf("outbound %s: %d %+v", phone, code, out)
	}
	return out.Data.ID
}

func phoneWith(suffix string, i int) string { return fmt.Sprintf("+1415%03d%s", i%1000, suffix) }
