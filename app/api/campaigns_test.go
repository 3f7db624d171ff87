package api

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// Campaign tests: batches paused, resumed and cancelled end to end with the
// sim dialer, observed through the dial log (one line per dial, written
// before the dialer runs).

// simWithLog runs the sim dialer at cps with a dial log in dir.
func simWithLog(dir string, cps float64, talk time.Duration) (func(*serveConfig), string) {
	path := filepath.Join(dir, "dials.log")
	return func(c *serveConfig) {
		c.Calls = calls.Config{Dialer: "sim", SimRing: 10 * time.Millisecond, SimTalk: talk, DialCPS: cps,
			MaxConcurrent: 50, Poll: 50 * time.Millisecond, Lease: 5 * time.Second, Drain: time.Second, DialLog: path}
	}, path
}

// batchView is the part of a batch the tests read.
type batchView struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Status     string          `json:"status"`
	Total      int             `json:"total"`
	Counts     map[string]int  `json:"counts"`
	Attempts   int             `json:"attempts"`
	AnswerRate *float64        `json:"answerRate"`
	NextDueAt  *string         `json:"nextDueAt"`
	Agent      calls.AgentName `json:"agent"`
}

// postBatch posts a batch of n calls (numbers +1415555<i>) and returns its id.
func (e *testEnv) postBatch(key, agentID, name string, n int, extra map[string]any) string {
	e.t.Helper()
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{"contactPhone": fmt.Sprintf("+1415555%04d", i)}
	}
	body := map[string]any{"agentId": agentID, "name": name, "calls": items}
	for k, v := range extra {
		body[k] = v
	}
	var out struct {
		Data struct {
			BatchID string `json:"batchId"`
			Name    string `json:"name"`
		}
	}
	if code := e.doJSON("POST", "/api/v1/calls/batch", key, body, &out); code != 201 || out.Data.Name != name {
		e.t.Fatalf("batch: %d %+v", code, out)
	}
	return out.Data.BatchID
}

func (e *testEnv) getBatch(key, id string) batchView {
	e.t.Helper()
	var out struct{ Data batchView }
	if code := e.doJSON("GET", "/api/v1/calls/batches/"+id, key, nil, &out); code != 200 {
		e.t.Fatalf("GET batch: %d", code)
	}
	return out.Data
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, timeout, cond, "%s", what)
}

// Pausing stops new dials within one pacing slot (at most the one already
// claimed); calls in progress finish; resuming carries on to the end.
func TestBatchPauseResume(t *testing.T) {
	opt, logPath := simWithLog(t.TempDir(), 10, 50*time.Millisecond) // one slot = 100 ms
	e := newTestEnv(t, opt)
	agent := e.voiceAgent(e.orgID)
	id := e.postBatch(e.key, agent.ID, "spring promo", 30, nil)
	waitFor(t, "first dials", 10*time.Second, func() bool { return len(testbin.DialLog(t, logPath)) >= 5 })

	var paused struct {
		Data    batchView
		Message string
	}
	if code := e.doJSON("POST", "/api/v1/calls/batches/"+id+"/pause", e.key, nil, &paused); code != 200 || paused.Data.Status != "paused" {
		t.Fatalf("pause: %d %+v", code, paused)
	}
	atPause := len(testbin.DialLog(t, logPath))
	// A wait for something not to happen (no dial while paused) has no
	// event to wait on: six pacing slots of the dialer's log staying still.
	testkit.Never(t, 600*time.Millisecond, func() bool { return len(testbin.DialLog(t, logPath)) > atPause+1 },
		"more than one dial after the pause (one pacing slot)")
	after := len(testbin.DialLog(t, logPath))
	b := e.getBatch(e.key, id)
	if b.Status != "paused" || b.Name != "spring promo" || b.Total != 30 || b.Counts["scheduled"] < 30-after-1 || b.Agent.ID != agent.ID {
		t.Fatalf("paused batch: %+v (dials %d)", b, after)
	}
	// A paused batch's waiting calls do not fall due.
	var list struct {
		Data struct {
			Calls      []callView
			Pagination struct{ Total int }
		}
	}
	if code := e.doJSON("GET", "/api/v1/calls?batchId="+id+"&status=scheduled&limit=100", e.key, nil, &list); code != 200 ||
		list.Data.Pagination.Total != b.Counts["scheduled"] {
		t.Fatalf("calls of the batch: %d %d vs %d", code, list.Data.Pagination.Total, b.Counts["scheduled"])
	}

	if code := e.doJSON("POST", "/api/v1/calls/batches/"+id+"/resume", e.key, nil, &paused); code != 200 || paused.Data.Status != "running" {
		t.Fatalf("resume: %d %+v", code, paused)
	}
	waitFor(t, "the rest dialled", 15*time.Second, func() bool { return e.getBatch(e.key, id).Status == "completed" })
	b = e.getBatch(e.key, id)
	if len(testbin.DialLog(t, logPath)) != 30 || b.Counts["completed"] != 30 || b.Attempts != 30 || b.AnswerRate == nil ||
		*b.AnswerRate != 1 || b.NextDueAt != nil {
		t.Fatalf("done: %+v, %d dials", b, len(testbin.DialLog(t, logPath)))
	}
	// A completed batch has nothing to pause.
	if code, _, body := e.do("POST", "/api/v1/calls/batches/"+id+"/pause", e.key, nil); code != 409 ||
		!strings.Contains(string(body), "batch is completed") {
		t.Fatalf("pause a completed batch: %d %s", code, body)
	}
}

// Cancelling a running batch of 1,000 leaves no call dialled afterwards:
// the dial log does not grow once DELETE has answered, and every call of
// the batch is final.
func TestBatchCancel1000(t *testing.T) {
	opt, logPath := simWithLog(t.TempDir(), 200, 100*time.Millisecond)
	e := newTestEnv(t, opt)
	agent := e.voiceAgent(e.orgID)
	id := e.postBatch(e.key, agent.ID, "big", 1000, nil)
	waitFor(t, "dials under way", 20*time.Second, func() bool { return len(testbin.DialLog(t, logPath)) >= 50 })
	var out struct {
		Data    batchView
		Message string
	}
	if code := e.doJSON("DELETE", "/api/v1/calls/batches/"+id, e.key, nil, &out); code != 200 || out.Data.Status != "cancelled" {
		t.Fatalf("cancel: %d %+v", code, out)
	}
	atCancel := testbin.DialLog(t, logPath)
	// No event says "nothing more will be dialled": a second of the
	// dialer's log staying still (ten pacing slots) is the check.
	testkit.Never(t, time.Second, func() bool { return len(testbin.DialLog(t, logPath)) != len(atCancel) },
		"calls dialled after the batch was cancelled")
	waitFor(t, "every call final", 10*time.Second, func() bool {
		b := e.getBatch(e.key, id)
		return b.Counts["connecting"]+b.Counts["ringing"]+b.Counts["active"]+b.Counts["queued"]+b.Counts["scheduled"] == 0
	})
	b := e.getBatch(e.key, id)
	if b.Status != "cancelled" || b.Total != 1000 || b.Counts["cancelled"] < 1000-len(atCancel) {
		t.Fatalf("cancelled batch: %+v (%d dialled)", b, len(atCancel))
	}
	t.Logf("%d of 1000 dialled before the cancel; %s", len(atCancel), out.Message)
	if code, _, _ := e.do("POST", "/api/v1/calls/batches/"+id+"/resume", e.key, nil); code != 409 {
		t.Fatalf("resume a cancelled batch: %d", code)
	}
}

// The batch list: newest first, filtered by agent and status, paged; a
// batch of another organization is not found.
func TestBatchList(t *testing.T) {
	e := newTestEnv(t, fastSim(time.Second))
	a1, a2 := e.voiceAgent(e.orgID), e.voiceAgent(e.orgID)
	later := map[string]any{"defaultScheduledAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	first := e.postBatch(e.key, a1.ID, "first", 2, later)
	second := e.postBatch(e.key, a2.ID, "second", 3, later)
	var page struct {
		Data struct {
			Batches    []batchView
			Pagination struct {
				Total   int
				HasMore bool
			}
		}
	}
	if code := e.doJSON("GET", "/api/v1/calls/batches?limit=1", e.key, nil, &page); code != 200 ||
		len(page.Data.Batches) != 1 || page.Data.Batches[0].ID != second || !page.Data.Pagination.HasMore || page.Data.Pagination.Total != 2 {
		t.Fatalf("newest first: %d %+v", code, page)
	}
	if code := e.doJSON("GET", "/api/v1/calls/batches?agentId="+a1.ID+"&status=running", e.key, nil, &page); code != 200 ||
		len(page.Data.Batches) != 1 || page.Data.Batches[0].ID != first || page.Data.Batches[0].Counts["scheduled"] != 2 ||
		page.Data.Batches[0].NextDueAt == nil {
		t.Fatalf("by agent: %d %+v", code, page)
	}
	if code, _, body := e.do("GET", "/api/v1/calls/batches?status=done", e.key, nil); code != 400 || !strings.Contains(string(body), "status must be") {
		t.Fatalf("bad status: %d %s", code, body)
	}
	_, otherKey := e.newOrg("other")
	if code, _, body := e.do("GET", "/api/v1/calls/batches/"+first, otherKey, nil); code != 404 || !strings.Contains(string(body), "batch not found") {
		t.Fatalf("other org: %d %s", code, body)
	}
	for _, p := range []string{"/pause", "/resume"} {
		if code, _, _ := e.do("POST", "/api/v1/calls/batches/"+first+p, otherKey, nil); code != 404 {
			t.Fatalf("other org %s: %d", p, code)
		}
	}
	if code, _, _ := e.do("DELETE", "/api/v1/calls/batches/"+first, otherKey, nil); code != 404 {
		t.Fatalf("other org cancel: %d", code)
	}
	if code, _, _ := e.do("GET", "/api/v1/calls/batches/"+first, "", nil); code != 401 {
		t.Fatalf("no key: %d", code)
	}
	// A dry run answers the times and creates nothing.
	var dry struct {
		Data struct {
			DryRun  bool   `json:"dryRun"`
			BatchID string `json:"batchId"`
			Results []struct {
				Success     bool    `json:"success"`
				CallID      string  `json:"callId"`
				ScheduledAt *string `json:"scheduledAt"`
			}
		}
		Message string
	}
	body := map[string]any{"agentId": a1.ID, "dryRun": true, "calls": []map[string]any{{"contactPhone": "+14155550100"}, {"contactPhone": "bad"}}}
	if code := e.doJSON("POST", "/api/v1/calls/batch", e.key, body, &dry); code != 200 || !dry.Data.DryRun || dry.Data.BatchID != "" ||
		!dry.Data.Results[0].Success || dry.Data.Results[0].CallID != "" || dry.Data.Results[0].ScheduledAt == nil || dry.Data.Results[1].Success ||
		!strings.Contains(dry.Message, "nothing was created") {
		t.Fatalf("dry run: %d %+v", code, dry)
	}
	if e.doJSON("GET", "/api/v1/calls/batches", e.key, nil, &page); page.Data.Pagination.Total != 2 {
		t.Fatalf("a dry run stored a batch: %d", page.Data.Pagination.Total)
	}
}

// Per-agent concurrency: an agent with maxConcurrentCalls 2 never has more
// than two calls dialled at once (replayed from the dial log), while an
// agent without a cap of its own goes up to the server's.
func TestAgentMaxConcurrentCalls(t *testing.T) {
	d := newConcurrencyDialer(300 * time.Millisecond)
	e := newTestEnv(t, func(c *serveConfig) {
		c.Calls = calls.Config{DialerImpl: d, DialCPS: 200, MaxConcurrent: 20, Poll: 50 * time.Millisecond,
			Lease: 5 * time.Second, Drain: time.Second}
	})
	var created struct {
		Data struct {
			ID     string `json:"id"`
			Config map[string]any
		}
	}
	code := e.doJSON("POST", "/api/v1/agents", e.key, map[string]any{"name": "capped", "type": "voice",
		"phoneNumbers": []string{"+15550001111"}, "config": map[string]any{"maxConcurrentCalls": 2}}, &created)
	if code != 201 || created.Data.Config["maxConcurrentCalls"] != float64(2) {
		t.Fatalf("create capped agent: %d %+v", code, created)
	}
	capped := created.Data.ID
	free := e.voiceAgent(e.orgID).ID
	if code, _, body := e.do("POST", "/api/v1/agents", e.key, map[string]any{"name": "x", "type": "voice",
		"config": map[string]any{"maxConcurrentCalls": 0}}); code != 400 || !strings.Contains(string(body), "config.maxConcurrentCalls") {
		t.Fatalf("cap 0: %d %s", code, body)
	}
	e.postBatch(e.key, capped, "capped", 10, nil)
	e.postBatch(e.key, free, "free", 6, nil)
	waitFor(t, "16 calls done", 20*time.Second, func() bool { return d.count("-") == 16 })
	peak := d.peaks()
	if peak[capped] != 2 {
		t.Errorf("capped agent peaked at %d calls at once, want 2", peak[capped])
	}
	if peak[free] < 3 {
		t.Errorf("uncapped agent peaked at %d, want more than 2", peak[free])
	}
}
