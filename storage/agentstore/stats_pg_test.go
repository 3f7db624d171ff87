package agentstore_test

import (
	"context"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// A call's steps inside one counted group (queued -> connecting -> ringing
// -> active) leave its agent's row alone: every process's dials wrote that
// one hot row at each step's commit. Its row version (xmin) changes only
// when a count does.
func TestAgentRowWrittenOnlyWhenACountMoves(t *testing.T) {
	dbtest.SkipOnSQLite(t, "xmin is its row version")
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := db.Dashboard.SeedCalls(ctx, []dashstore.SeedCall{{OrgID: org, AgentID: a.ID, Status: "scheduled"}})
	if err != nil {
		t.Fatal(err)
	}
	version := func() (v string) {
		t.Helper()
		if err := db.Conn().Reader().QueryRowContext(ctx, "SELECT xmin::text FROM agents WHERE id = ?", a.ID).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, step := range []struct {
		status string
		moves  bool
	}{{"queued", true}, {"connecting", false}, {"ringing", false}, {"active", false}, {"completed", true}} {
		before := version()
		if err := db.Dashboard.SetCallStatusForTest(ctx, ids[0], step.status); err != nil {
			t.Fatal(err)
		}
		if moved := version() != before; moved != step.moves {
			t.Errorf("to %s: agent row written %v, want %v", step.status, moved, step.moves)
		}
	}
	w, err := db.Agents.ListWorkers(ctx, org)
	if err != nil || len(w) != 1 || w[0].LiveCalls != 0 || w[0].FinishedCalls != 1 || w[0].CompletedCalls != 1 {
		t.Fatalf("counters %+v, %v", w, err)
	}
}
