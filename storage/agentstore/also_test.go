package agentstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/analysisstore"
)

// An Also step runs in the agent's transaction: its writes are kept with
// the agent's, and its error rolls back the agent's row, its phone claims
// and the step's own writes.
func TestAgentWriteWithAlso(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	plan := func(p string) agentstore.Also {
		return func(ctx context.Context, tx *sql.Tx, orgID, agentID string) error {
			return analysisstore.WritePlan(ctx, tx, orgID, agentID, json.RawMessage(p))
		}
	}
	boom := errors.New("boom")
	failAfter := func(step agentstore.Also) agentstore.Also {
		return func(ctx context.Context, tx *sql.Tx, orgID, agentID string) error {
			if err := step(ctx, tx, orgID, agentID); err != nil {
				return err
			}
			return boom
		}
	}
	planOf := func(id string) string {
		t.Helper()
		p, err := db.Analyses.Plan(ctx, org, id)
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}

	a, err := db.Agents.CreateAgentWith(ctx, agentstore.Agent{OrgID: org, Name: "kept", Type: "chat", Status: "active"}, plan(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := planOf(a.ID); got != `{"a":1}` {
		t.Fatalf("plan written with the agent: %q", got)
	}

	// A failed step: no agent, no plan, the number free for another agent.
	refused := agentstore.Agent{OrgID: org, Name: "refused", Type: "voice", Status: "active", PhoneNumbers: []string{"+15551230000"}}
	if _, err := db.Agents.CreateAgentWith(ctx, refused, failAfter(plan(`{"b":2}`))); !errors.Is(err, boom) {
		t.Fatalf("create with a failing step: %v", err)
	}
	list, _, err := db.Agents.ListAgents(ctx, org, agentstore.AgentFilter{Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("agents after a refused create: %d %v", len(list), err)
	}
	var plans int
	if err := db.Conn().Reader().QueryRowContext(ctx, "SELECT count(*) FROM agent_analysis_plans").Scan(&plans); err != nil || plans != 1 {
		t.Fatalf("plans after a refused create: %d %v", plans, err)
	}
	if _, err := db.Agents.VoiceAgentForNumber(ctx, "+15551230000"); err == nil {
		t.Fatal("a refused create kept its number")
	}

	// A failed step on update leaves the agent and its plan as they were.
	_, err = db.Agents.UpdateAgentWith(ctx, org, a.ID, func(x *agentstore.Agent) error { x.Name = "changed"; return nil }, failAfter(plan(`{"c":3}`)))
	if !errors.Is(err, boom) {
		t.Fatalf("update with a failing step: %v", err)
	}
	if g, _ := db.Agents.GetAgent(ctx, org, a.ID); g.Name != "kept" || !g.UpdatedAt.Equal(a.UpdatedAt) {
		t.Fatalf("a refused update changed the agent: %+v", g)
	}
	if got := planOf(a.ID); got != `{"a":1}` {
		t.Fatalf("a refused update changed the plan: %q", got)
	}

	// A step that succeeds is kept with the change; nil removes the plan.
	u, err := db.Agents.UpdateAgentWith(ctx, org, a.ID, func(x *agentstore.Agent) error { x.Name = "renamed"; return nil },
		func(ctx context.Context, tx *sql.Tx, orgID, agentID string) error {
			return analysisstore.WritePlan(ctx, tx, orgID, agentID, nil)
		})
	if err != nil || u.Name != "renamed" {
		t.Fatalf("update: %+v %v", u, err)
	}
	if got := planOf(a.ID); got != "" {
		t.Fatalf("plan after removal: %q", got)
	}
}
