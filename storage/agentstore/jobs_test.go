package agentstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
)

// Jobs hang on an agent of their own organization; another organization's
// jobs and agents are not found, and a refused change writes nothing.
func TestJobsStayInTheirOrganization(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	acme, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	agent := func(org string) string {
		a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "chat", Status: "active"})
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	a1, a2, foreign := agent(acme.ID), agent(acme.ID), agent(other.ID)
	job := func(name, agentID string) agentstore.Job {
		return agentstore.Job{OrgID: acme.ID, AgentID: agentID, Name: name, Status: "active", TriggerType: "manual", TrustLevel: "supervised"}
	}
	if _, err := db.Agents.CreateJob(ctx, job("x", foreign)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("job on another organization's agent: %v", err)
	}
	j1, err := db.Agents.CreateJob(ctx, job("first", a1))
	if err != nil {
		t.Fatal(err)
	}
	j2, err := db.Agents.CreateJob(ctx, job("second", a2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Agents.CreateJob(ctx, agentstore.Job{OrgID: acme.ID, AgentID: a1, Name: "bad", Status: "active", TriggerType: "cron", TrustLevel: "supervised"}); err == nil {
		t.Fatal("the schema took an unknown trigger type")
	}

	if got, err := db.Agents.GetJob(ctx, acme.ID, j1.ID); err != nil || got != j1 {
		t.Fatalf("get: %+v %v, want %+v", got, err, j1)
	}
	if _, err := db.Agents.GetJob(ctx, other.ID, j1.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get through another organization: %v", err)
	}
	all, err := db.Agents.ListJobs(ctx, acme.ID, "")
	if err != nil || len(all) != 2 || all[0].ID != j2.ID || all[1].ID != j1.ID {
		t.Fatalf("list newest first: %+v %v", all, err)
	}
	if mine, err := db.Agents.ListJobs(ctx, acme.ID, a1); err != nil || len(mine) != 1 || mine[0].ID != j1.ID {
		t.Fatalf("list of a1: %+v %v", mine, err)
	}
	if none, err := db.Agents.ListJobs(ctx, other.ID, ""); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("list of other: %#v %v, want an empty list", none, err)
	}

	// Moving to another organization's agent, or a change that fails,
	// leaves the job as it was.
	if _, err := db.Agents.UpdateJob(ctx, acme.ID, j1.ID, func(j *agentstore.Job) error { j.AgentID, j.Name = foreign, "moved"; return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("move to a foreign agent: %v", err)
	}
	boom := errors.New("no")
	if _, err := db.Agents.UpdateJob(ctx, acme.ID, j1.ID, func(j *agentstore.Job) error { j.Name = "half"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed change: %v", err)
	}
	if got, _ := db.Agents.GetJob(ctx, acme.ID, j1.ID); got != j1 {
		t.Fatalf("refused changes were written: %+v", got)
	}
	if _, err := db.Agents.UpdateJob(ctx, other.ID, j1.ID, func(*agentstore.Job) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("update through another organization: %v", err)
	}
	upd, err := db.Agents.UpdateJob(ctx, acme.ID, j1.ID, func(j *agentstore.Job) error {
		j.AgentID, j.Status, j.TrustLevel = a2, "paused", "autonomous"
		return nil
	})
	if err != nil || upd.AgentID != a2 || upd.Status != "paused" || upd.UpdatedAt.Before(j1.UpdatedAt) || !upd.CreatedAt.Equal(j1.CreatedAt) {
		t.Fatalf("update: %+v %v", upd, err)
	}
	if got, _ := db.Agents.GetJob(ctx, acme.ID, j1.ID); got != upd {
		t.Fatalf("stored %+v, returned %+v", got, upd)
	}

	if err := db.Agents.DeleteJob(ctx, other.ID, j1.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete through another organization: %v", err)
	}
	if err := db.Agents.DeleteJob(ctx, acme.ID, j1.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.Agents.DeleteJob(ctx, acme.ID, j1.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}
