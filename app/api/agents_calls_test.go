package api

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/testkit"
)

// Real calls through POST /api/v1/calls/outbound and the simulator dialer:
// the worker is active while they run, and its stats count them once they
// end (12 completed, 1 busy: "0.9231").
func TestWorkerStatsThroughRealCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("places real simulated calls")
	}
	e := newTestEnv(t, func(c *serveConfig) {
		c.Calls = calls.Config{Dialer: "sim", SimRing: 20 * time.Millisecond, SimTalk: 300 * time.Millisecond,
			DialCPS: 100, MaxConcurrent: 20, Poll: 50 * time.Millisecond}
	})
	a := mustCreateAgent(t, e, e.key, map[string]any{"name": "dialer", "type": "voice", "phoneNumbers": []string{"+15551230000"}})
	for i := 0; i < 13; i++ {
		phone := fmt.Sprintf("+1415555%04d", 1000+i)
		if i == 0 {
			phone = "+14155550486" // the simulator's busy number
		}
		code, _, b := e.do("POST", "/api/v1/calls/outbound", e.key, map[string]any{"agentId": a.ID, "phoneNumber": phone})
		if code != 201 {
			t.Fatalf("outbound %s: %d %s", phone, code, b)
		}
	}
	// Each call is at least queued and talks for 300 ms: the worker is busy now.
	if w := workerByID(t, listWorkers(t, e, e.key), a.ID); w.WorkforceStatus != "active" {
		t.Fatalf("while calling: %+v", w)
	}
	var w agents.Worker
	testkit.Eventually(t, 30*time.Second, func() bool {
		w = workerByID(t, listWorkers(t, e, e.key), a.ID)
		return w.TotalActions == 13 && w.WorkforceStatus == "idle"
	}, "calls did not finish: %+v", &w)
	if w.SuccessfulActions != 12 || w.ReliabilityScore != "0.9231" {
		t.Fatalf("after the calls: %+v", w)
	}
}
