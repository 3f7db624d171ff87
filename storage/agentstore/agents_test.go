package agentstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
)

var callStatuses = []string{"initiated", "queued", "scheduled", "connecting", "ringing", "active",
	"completed", "failed", "cancelled", "no_answer", "busy"}

// The trigger-kept counters always equal a recount over the calls table,
// through random inserts, status changes, agent moves and deletes.
func TestAgentCallCountersMatchRecount(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	var agents []string
	for i := 0; i < 4; i++ {
		a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "voice", Status: "active"})
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a.ID)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var calls []string
	for step := 0; step < 400; step++ {
		switch op := rng.IntN(10); {
		case op < 4 || len(calls) == 0:
			ids, err := db.Dashboard.SeedCalls(ctx, []dashstore.SeedCall{{OrgID: org, AgentID: agents[rng.IntN(len(agents))],
				Status: callStatuses[rng.IntN(len(callStatuses))]}})
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, ids...)
		case op < 8:
			if err := db.Dashboard.SetCallStatusForTest(ctx, calls[rng.IntN(len(calls))], callStatuses[rng.IntN(len(callStatuses))]); err != nil {
				t.Fatal(err)
			}
		case op < 9:
			err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, "UPDATE calls SET agent_id = ? WHERE id = ?",
					agents[rng.IntN(len(agents))], calls[rng.IntN(len(calls))])
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		default:
			i := rng.IntN(len(calls))
			if err := db.Dashboard.DeleteCallForTest(ctx, calls[i]); err != nil {
				t.Fatal(err)
			}
			calls = append(calls[:i], calls[i+1:]...)
		}
	}
	ws, err := db.Agents.ListWorkers(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != len(agents) {
		t.Fatalf("%d workers", len(ws))
	}
	total := int64(0)
	for _, w := range ws {
		var live, fin, done int64
		err := db.Conn().Reader().QueryRowContext(ctx, `SELECT
			coalesce(sum(CASE WHEN status IN ('queued','connecting','ringing','active') THEN 1 ELSE 0 END), 0),
			coalesce(sum(CASE WHEN status IN ('completed','failed','no_answer','busy') THEN 1 ELSE 0 END), 0),
			coalesce(sum(CASE WHEN status = 'completed' THEN 1 ELSE 0 END), 0) FROM calls WHERE agent_id = ?`, w.ID).Scan(&live, &fin, &done)
		if err != nil {
			t.Fatal(err)
		}
		if w.LiveCalls != live || w.FinishedCalls != fin || w.CompletedCalls != done {
			t.Errorf("agent %s: counters %d/%d/%d, recount %d/%d/%d", w.ID, w.LiveCalls, w.FinishedCalls, w.CompletedCalls, live, fin, done)
		}
		total += fin
	}
	if total == 0 {
		t.Fatal("no finished call in the random walk: the test proves nothing")
	}
}

// Pages of ListAgents are newest first, never overlap, and hasMore is
// false exactly on the last page; filters apply before paging.
func TestListAgentsPaging(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: other.ID, Name: "x", Type: "voice", Status: "active"}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 0; i < 7; i++ {
		typ := "voice"
		if i%2 == 1 {
			typ = "chat"
		}
		a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: typ, Status: "active"})
		if err != nil {
			t.Fatal(err)
		}
		if typ == "voice" {
			want = append([]string{a.ID}, want...)
		}
	}
	var got []string
	for off := 0; ; off += 3 {
		page, more, err := db.Agents.ListAgents(ctx, org, agentstore.AgentFilter{Type: "voice", Limit: 3, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			got = append(got, a.ID)
		}
		if !more {
			break
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d agents, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("order: got %v want %v", got, want)
		}
	}
}

// UpdateAgent keeps id, org and creation time, aborts on the change's error
// and never reaches another organization's agent.
func TestUpdateAgent(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "voice", Status: "active", PhoneNumbers: []string{"+15551234567"}})
	if err != nil {
		t.Fatal(err)
	}
	// Times are stored in milliseconds: the update must fall in a later one.
	testkit.Eventually(t, time.Second, func() bool { return time.Now().UnixMilli() > a.UpdatedAt.UnixMilli() }, "clock stuck")
	u, err := db.Agents.UpdateAgent(ctx, org, a.ID, func(x *agentstore.Agent) error { x.Name = "b"; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "b" || !u.CreatedAt.Equal(a.CreatedAt) || !u.UpdatedAt.After(a.UpdatedAt) || u.PhoneNumbers[0] != "+15551234567" {
		t.Fatalf("%+v", u)
	}
	boom := errors.New("boom")
	if _, err := db.Agents.UpdateAgent(ctx, org, a.ID, func(x *agentstore.Agent) error { x.Name = "c"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if g, _ := db.Agents.GetAgent(ctx, org, a.ID); g.Name != "b" {
		t.Fatalf("aborted change was written: %q", g.Name)
	}
	if _, err := db.Agents.UpdateAgent(ctx, "other-org", a.ID, func(*agentstore.Agent) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other org: %v", err)
	}
}

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

// seedWorkforce makes 200 agents and 100,000 calls in every state.
func seedWorkforce(b *testing.B) (*storage.Stores, string) {
	ctx := context.Background()
	db, org := storetest.WithOrg(b)
	agents := make([]string, 200)
	for i := range agents {
		a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: fmt.Sprint("a", i), Type: "voice", Status: "active"})
		if err != nil {
			b.Fatal(err)
		}
		agents[i] = a.ID
	}
	for off := 0; off < 100_000; off += 10_000 {
		batch := make([]dashstore.SeedCall, 0, 10_000)
		for i := off; i < off+10_000; i++ {
			batch = append(batch, dashstore.SeedCall{OrgID: org, AgentID: agents[i%200], Status: callStatuses[i%len(callStatuses)]})
		}
		if _, err := db.Dashboard.SeedCalls(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	return db, org
}

// BenchmarkWorkersFromCounters is what the workforce view reads: 200 rows
// with trigger-kept counters.
func BenchmarkWorkersFromCounters(b *testing.B) {
	db, org := seedWorkforce(b)
	for b.Loop() {
		if ws, err := db.Agents.ListWorkers(context.Background(), org); err != nil || len(ws) != 200 {
			b.Fatal(len(ws), err)
		}
	}
}

// BenchmarkWorkersGroupedScan is the alternative the counters replace: one
// grouped query over the organization's calls (the calls_agent_status
// index covers it). Kept to show why the counters exist.
func BenchmarkWorkersGroupedScan(b *testing.B) {
	db, org := seedWorkforce(b)
	for b.Loop() {
		rows, err := db.Conn().Reader().QueryContext(context.Background(), `SELECT agent_id,
			sum(CASE WHEN status IN ('queued','connecting','ringing','active') THEN 1 ELSE 0 END),
			sum(CASE WHEN status IN ('completed','failed','no_answer','busy') THEN 1 ELSE 0 END), sum(CASE WHEN status = 'completed' THEN 1 ELSE 0 END)
			FROM calls WHERE agent_id IN (SELECT id FROM agents WHERE org_id = ?) GROUP BY agent_id`, org)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 200 {
			b.Fatal(n)
		}
	}
}
