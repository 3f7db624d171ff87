package api

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
)

type jobBody struct {
	Data agents.JobView `json:"data"`
}

// Jobs are created, listed, moved, changed and deleted, and show on their
// agent's worker as assignedJobs.
func TestJobsLifecycle(t *testing.T) {
	e := newTestEnv(t)
	a := mustCreateAgent(t, e, e.key, map[string]any{"name": "a", "type": "voice"})
	b := mustCreateAgent(t, e, e.key, map[string]any{"name": "b", "type": "chat"})

	var j jobBody
	if code := e.doJSON("POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID, "name": " Follow up "}, &j); code != 201 {
		t.Fatalf("create: %d", code)
	}
	if j.Data.Name != "Follow up" || j.Data.Status != "active" || j.Data.TriggerType != "manual" || j.Data.TrustLevel != "supervised" || j.Data.AgentID != a.ID {
		t.Fatalf("defaults %+v", j.Data)
	}
	var j2 jobBody
	e.doJSON("POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID, "name": "Campaign", "status": "paused",
		"triggerType": "outbound_campaign", "trustLevel": "semi_autonomous"}, &j2)

	w := workerByID(t, listWorkers(t, e, e.key), a.ID)
	if len(w.AssignedJobs) != 2 || w.AssignedJobs[0].ID != j.Data.ID || w.AssignedJobs[1].TrustLevel != "semi_autonomous" ||
		w.AssignedJobs[1].TriggerType != "outbound_campaign" || w.AssignedJobs[1].Status != "paused" {
		t.Fatalf("assignedJobs %+v", w.AssignedJobs)
	}

	var list struct {
		Data struct {
			Jobs  []agents.JobView `json:"jobs"`
			Count int              `json:"count"`
		} `json:"data"`
	}
	e.doJSON("GET", "/api/v2/jobs", e.key, nil, &list)
	if list.Data.Count != 2 || list.Data.Jobs[0].ID != j2.Data.ID {
		t.Fatalf("list %+v", list.Data)
	}

	// Move the first job to agent b and change its trust level only.
	var up jobBody
	if code := e.doJSON("PATCH", "/api/v2/jobs/"+j.Data.ID, e.key, map[string]any{"agentId": b.ID, "trustLevel": "autonomous"}, &up); code != 200 {
		t.Fatalf("patch: %d", code)
	}
	if up.Data.AgentID != b.ID || up.Data.TrustLevel != "autonomous" || up.Data.Name != "Follow up" || up.Data.TriggerType != "manual" {
		t.Fatalf("patched %+v", up.Data)
	}
	e.doJSON("GET", "/api/v2/jobs?agentId="+b.ID, e.key, nil, &list)
	if list.Data.Count != 1 || list.Data.Jobs[0].ID != j.Data.ID {
		t.Fatalf("jobs of b %+v", list.Data)
	}
	l := listWorkers(t, e, e.key)
	if len(workerByID(t, l, a.ID).AssignedJobs) != 1 || len(workerByID(t, l, b.ID).AssignedJobs) != 1 {
		t.Fatalf("after move: %+v", l.Data.Agents)
	}

	if code := e.doJSON("DELETE", "/api/v2/jobs/"+j.Data.ID, e.key, nil, nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if code := e.doJSON("DELETE", "/api/v2/jobs/"+j.Data.ID, e.key, nil, nil); code != 404 {
		t.Fatalf("second delete: %d", code)
	}
	if w := workerByID(t, listWorkers(t, e, e.key), b.ID); len(w.AssignedJobs) != 0 {
		t.Fatalf("deleted job still assigned: %+v", w.AssignedJobs)
	}
}

func TestJobsErrorsAndIsolation(t *testing.T) {
	e := newTestEnv(t)
	a := mustCreateAgent(t, e, e.key, map[string]any{"name": "a", "type": "voice"})
	var j jobBody
	e.doJSON("POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID, "name": "x"}, &j)
	_, otherKey := e.newOrg("other")
	theirAgent := mustCreateAgent(t, e, otherKey, map[string]any{"name": "t", "type": "voice"})

	type v2err struct {
		Error struct {
			Message string `json:"message"`
			Status  int    `json:"status"`
		} `json:"error"`
	}
	for _, c := range []struct {
		method, path, key string
		body              any
		code              int
		msg               string
	}{
		{"POST", "/api/v2/jobs", e.key, map[string]any{"name": "x"}, 400, "agentId: required"},
		{"POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID}, 400, "name: required"},
		{"POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID, "name": "x", "status": "done"}, 400, "status: must be active or paused"},
		{"POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID, "name": "x", "triggerType": "cron"}, 400, "triggerType: must be one of"},
		{"POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID, "name": "x", "trustLevel": "full"}, 400, "trustLevel: must be one of"},
		{"POST", "/api/v2/jobs", e.key, map[string]any{"agentId": a.ID, "name": 7}, 400, "name: must be a string"},
		{"POST", "/api/v2/jobs", e.key, map[string]any{"agentId": theirAgent.ID, "name": "x"}, 404, "agent not found"},
		{"PATCH", "/api/v2/jobs/" + j.Data.ID, e.key, map[string]any{"agentId": theirAgent.ID}, 404, "agent not found"},
		{"PATCH", "/api/v2/jobs/" + j.Data.ID, e.key, map[string]any{"name": ""}, 400, "name: required"},
		{"PATCH", "/api/v2/jobs/" + j.Data.ID, otherKey, map[string]any{"name": "mine"}, 404, "job not found"},
		{"DELETE", "/api/v2/jobs/" + j.Data.ID, otherKey, nil, 404, "job not found"},
		{"GET", "/api/v2/jobs", e.keyWithRole(e.orgID, "viewer", access.KeyOptions{}), nil, 403, "insufficient permissions"},
		{"POST", "/api/v2/jobs", "", map[string]any{"agentId": a.ID, "name": "x"}, 401, ""},
	} {
		var body v2err
		code := e.doJSON(c.method, c.path, c.key, c.body, &body)
		if code != c.code || body.Error.Status != c.code || !strings.HasPrefix(body.Error.Message, c.msg) {
			t.Errorf("%s %s %v: %d %+v", c.method, c.path, c.body, code, body)
		}
	}
	// The other organization sees none of our jobs; a member may manage jobs.
	var list struct {
		Data struct{ Count int } `json:"data"`
	}
	e.doJSON("GET", "/api/v2/jobs", otherKey, nil, &list)
	if list.Data.Count != 0 {
		t.Errorf("other org lists %d jobs", list.Data.Count)
	}
	member := e.keyWithRole(e.orgID, "member", access.KeyOptions{})
	if code := e.doJSON("PATCH", "/api/v2/jobs/"+j.Data.ID, member, map[string]any{"status": "paused"}, nil); code != 200 {
		t.Errorf("member patch: %d", code)
	}
}
