package api

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/storage/dashstore"

	"github.com/agentd/agentd/app/agents"
)

// workerList is the v2 worker list body.
type workerList struct {
	Data struct {
		Agents []agents.Worker `json:"agents"`
		Count  int             `json:"count"`
	} `json:"data"`
	Meta struct {
		Timestamp string `json:"timestamp"`
	} `json:"meta"`
}

func listWorkers(t *testing.T, e *testEnv, key string) workerList {
	t.Helper()
	var l workerList
	if code := e.doJSON("GET", "/api/v2/agents", key, nil, &l); code != 200 {
		t.Fatalf("workers: %d", code)
	}
	return l
}

func workerByID(t *testing.T, l workerList, id string) agents.Worker {
	t.Helper()
	for _, w := range l.Data.Agents {
		if w.ID == id {
			return w
		}
	}
	t.Fatalf("worker %s not listed", id)
	return agents.Worker{}
}

// Worker stats follow the organization's calls as they reach final states.
// Here the calls are rows moved by hand (dashstore.SeedCalls) so each state is
// checked; TestWorkerStatsThroughRealCalls drives real calls. Seeded rows
// avoid initiated, scheduled and queued, which the running scheduler and
// dial queue would take over.
func TestWorkerStatsFollowCalls(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	voice := mustCreateAgent(t, e, e.key, map[string]any{"name": "caller", "type": "voice", "specialty": "sales",
		"displayRole": "SDR", "model": "m", "phoneNumbers": []string{"+15551230000"}})
	chat := mustCreateAgent(t, e, e.key, map[string]any{"name": "widget", "type": "chat"})
	otherOrg, otherKey := e.newOrg("other")
	theirs := mustCreateAgent(t, e, otherKey, map[string]any{"name": "theirs", "type": "voice"})

	l := listWorkers(t, e, e.key)
	if l.Data.Count != 2 || len(l.Data.Agents) != 2 || l.Data.Agents[0].ID != chat.ID || l.Data.Agents[1].ID != voice.ID {
		t.Fatalf("workers not newest first: %+v", l.Data)
	}
	if _, err := time.Parse(time.RFC3339, l.Meta.Timestamp); err != nil {
		t.Errorf("meta.timestamp %q", l.Meta.Timestamp)
	}
	w := workerByID(t, l, voice.ID)
	if w.WorkforceStatus != "idle" || w.TotalActions != 0 || w.ReliabilityScore != "0.0000" || w.Specialty != "sales" ||
		w.DisplayRole != "SDR" || len(w.PhoneNumbers) != 1 || w.Model != "m" || w.AssignedJobs == nil {
		t.Fatalf("fresh worker %+v", w)
	}
	if c := workerByID(t, l, chat.ID); c.PhoneNumbers == nil || len(c.PhoneNumbers) != 0 {
		t.Errorf("chat worker phoneNumbers %v", c.PhoneNumbers)
	}

	// 13 calls connecting for the voice agent, plus noise: calls of the other
	// organization's agent and a cancelled call, which never counts.
	var seed []dashstore.SeedCall
	for i := 0; i < 13; i++ {
		seed = append(seed, dashstore.SeedCall{OrgID: e.orgID, AgentID: voice.ID, Status: "connecting"})
	}
	seed = append(seed, dashstore.SeedCall{OrgID: e.orgID, AgentID: voice.ID, Status: "cancelled"})
	for i := 0; i < 5; i++ {
		seed = append(seed, dashstore.SeedCall{OrgID: otherOrg, AgentID: theirs.ID, Status: "completed"})
	}
	callIDs, err := e.db.Dashboard.SeedCalls(ctx, seed)
	if err != nil {
		t.Fatal(err)
	}
	w = workerByID(t, listWorkers(t, e, e.key), voice.ID)
	if w.WorkforceStatus != "active" || w.TotalActions != 0 {
		t.Fatalf("with queued calls %+v", w)
	}
	// Walk each call through the dial states to a final one: 12 completed, 1 busy.
	for i, id := range callIDs[:13] {
		final := "completed"
		if i == 0 {
			final = "busy"
		}
		for _, st := range []string{"ringing", "active", final} {
			if final == "busy" && st == "active" {
				continue
			}
			if err := e.db.Dashboard.SetCallStatusForTest(ctx, id, st); err != nil {
				t.Fatal(err)
			}
		}
		w = workerByID(t, listWorkers(t, e, e.key), voice.ID)
		if i < 12 && w.WorkforceStatus != "active" {
			t.Fatalf("after %d finished calls: %s", i+1, w.WorkforceStatus)
		}
	}
	if w.WorkforceStatus != "idle" || w.TotalActions != 13 || w.SuccessfulActions != 12 || w.ReliabilityScore != "0.9231" {
		t.Fatalf("after the calls: %+v", w)
	}
	// failed and no_answer count as actions, not successes.
	if _, err := e.db.Dashboard.SeedCalls(ctx, []dashstore.SeedCall{{OrgID: e.orgID, AgentID: voice.ID, Status: "failed"},
		{OrgID: e.orgID, AgentID: voice.ID, Status: "no_answer"}, {OrgID: e.orgID, AgentID: voice.ID, Status: "ringing"}}); err != nil {
		t.Fatal(err)
	}
	w = workerByID(t, listWorkers(t, e, e.key), voice.ID)
	if w.WorkforceStatus != "active" || w.TotalActions != 15 || w.SuccessfulActions != 12 || w.ReliabilityScore != "0.8000" {
		t.Fatalf("with failed, no_answer and ringing: %+v", w)
	}
	// An inactive agent is inactive whatever its calls.
	e.doJSON("DELETE", "/api/v1/agents/"+voice.ID, e.key, nil, nil)
	if w = workerByID(t, listWorkers(t, e, e.key), voice.ID); w.WorkforceStatus != "inactive" || w.TotalActions != 15 {
		t.Fatalf("deleted worker %+v", w)
	}
	if o := workerByID(t, listWorkers(t, e, otherKey), theirs.ID); o.TotalActions != 5 || o.ReliabilityScore != "1.0000" {
		t.Fatalf("other org worker %+v", o)
	}
	// Every role holds agent:read.
	viewer := e.keyWithRole(e.orgID, "viewer", access.KeyOptions{})
	if l := listWorkers(t, e, viewer); l.Data.Count != 2 {
		t.Errorf("viewer sees %d workers", l.Data.Count)
	}
	if code, _, _ := e.do("GET", "/api/v2/agents", "", nil); code != 401 {
		t.Errorf("no key: %d", code)
	}
}
