package storage

import (
	"context"
	"errors"
	"testing"
)

// Jobs hang on an agent of their own organization; another organization's
// jobs and agents are not found, and a refused change writes nothing.
func TestJobsStayInTheirOrganization(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t)
	acme, err := db.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	agent := func(org string) string {
		a, err := db.CreateAgent(ctx, Agent{OrgID: org, Name: "a", Type: "chat", Status: "active"})
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	a1, a2, foreign := agent(acme.ID), agent(acme.ID), agent(other.ID)
	job := func(name, agentID string) Job {
		return Job{OrgID: acme.ID, AgentID: agentID, Name: name, Status: "active", TriggerType: "manual", TrustLevel: "supervised"}
	}
	if _, err := db.CreateJob(ctx, job("x", foreign)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("job on another organization's agent: %v", err)
	}
	j1, err := db.CreateJob(ctx, job("first", a1))
	if err != nil {
		t.Fatal(err)
	}
	j2, err := db.CreateJob(ctx, job("second", a2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateJob(ctx, Job{OrgID: acme.ID, AgentID: a1, Name: "bad", Status: "active", TriggerType: "cron", TrustLevel: "supervised"}); err == nil {
		t.Fatal("the schema took an unknown trigger type")
	}

	if got, err := db.GetJob(ctx, acme.ID, j1.ID); err != nil || got != j1 {
		t.Fatalf("get: %+v %v, want %+v", got, err, j1)
	}
	if _, err := db.GetJob(ctx, other.ID, j1.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get through another organization: %v", err)
	}
	all, err := db.ListJobs(ctx, acme.ID, "")
	if err != nil || len(all) != 2 || all[0].ID != j2.ID || all[1].ID != j1.ID {
		t.Fatalf("list newest first: %+v %v", all, err)
	}
	if mine, err := db.ListJobs(ctx, acme.ID, a1); err != nil || len(mine) != 1 || mine[0].ID != j1.ID {
		t.Fatalf("list of a1: %+v %v", mine, err)
	}
	if none, err := db.ListJobs(ctx, other.ID, ""); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("list of other: %#v %v, want an empty list", none, err)
	}

	// Moving to another organization's agent, or a change that fails,
	// leaves the job as it was.
	if _, err := db.UpdateJob(ctx, acme.ID, j1.ID, func(j *Job) error { j.AgentID, j.Name = foreign, "moved"; return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("move to a foreign agent: %v", err)
	}
	boom := errors.New("no")
	if _, err := db.UpdateJob(ctx, acme.ID, j1.ID, func(j *Job) error { j.Name = "half"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed change: %v", err)
	}
	if got, _ := db.GetJob(ctx, acme.ID, j1.ID); got != j1 {
		t.Fatalf("refused changes were written: %+v", got)
	}
	if _, err := db.UpdateJob(ctx, other.ID, j1.ID, func(*Job) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update through another organization: %v", err)
	}
	upd, err := db.UpdateJob(ctx, acme.ID, j1.ID, func(j *Job) error { j.AgentID, j.Status, j.TrustLevel = a2, "paused", "autonomous"; return nil })
	if err != nil || upd.AgentID != a2 || upd.Status != "paused" || upd.UpdatedAt.Before(j1.UpdatedAt) || !upd.CreatedAt.Equal(j1.CreatedAt) {
		t.Fatalf("update: %+v %v", upd, err)
	}
	if got, _ := db.GetJob(ctx, acme.ID, j1.ID); got != upd {
		t.Fatalf("stored %+v, returned %+v", got, upd)
	}

	if err := db.DeleteJob(ctx, other.ID, j1.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete through another organization: %v", err)
	}
	if err := db.DeleteJob(ctx, acme.ID, j1.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteJob(ctx, acme.ID, j1.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}
