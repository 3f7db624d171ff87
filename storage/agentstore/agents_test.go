package agentstore_test

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
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
			ids, err := db.Calls.SeedCalls(ctx, []callstore.SeedCall{{OrgID: org, AgentID: agents[rng.IntN(len(agents))],
				Status: callStatuses[rng.IntN(len(callStatuses))]}})
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, ids...)
		case op < 8:
			if err := db.Calls.SetCallStatusForTest(ctx, calls[rng.IntN(len(calls))], callStatuses[rng.IntN(len(callStatuses))]); err != nil {
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
			if err := db.Calls.DeleteCallForTest(ctx, calls[i]); err != nil {
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
	time.Sleep(2 * time.Millisecond)
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
