package api

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"github.com/agentd/agentd/storage"
)

// An agent and its analysisPlan are written in one transaction: when the
// plan's write fails (a trigger refuses it), POST stores no agent and PATCH
// leaves the agent and its plan as they were, so a client's retry never
// makes a second agent. The answer is the generic 500 of an unexpected
// database error, which names nothing inside.
func TestAgentAnalysisPlanWriteFailsWholly(t *testing.T) {
	e := newAnalysisEnv(t, false)
	countAgents := func() int {
		t.Helper()
		var list struct {
			Data struct{ Agents []struct{ Name string } }
		}
		if code := e.doJSON("GET", "/api/v1/agents", e.key, nil, &list); code != 200 {
			t.Fatalf("list: %d", code)
		}
		return len(list.Data.Agents)
	}
	agents := countAgents()
	_, _, before := e.do("GET", "/api/v1/agents/"+e.agentID, e.key, nil)
	if !strings.Contains(string(before), "pass_fail") {
		t.Fatalf("the env's agent has no plan: %s", before)
	}

	drop := refusePlanWrites(t, e.db)
	// A 500 is what any route answers to an unexpected database error; the
	// OpenAPI document lists it nowhere, so these requests skip its checker.
	checked := e.client
	e.client = &http.Client{}
	const generic = `{"error":{"code":"INTERNAL_ERROR","message":"Internal server error"},"success":false}`
	code, _, b := e.do("POST", "/api/v1/agents", e.key, map[string]any{"name": "Half", "type": "chat", "analysisPlan": bookingPlan})
	if code != 500 || strings.TrimSpace(string(b)) != generic {
		t.Errorf("create with a refused plan write: %d %s", code, b)
	}
	for _, plan := range []any{map[string]any{"summary": map[string]any{"enabled": true}}, nil} {
		code, _, b := e.do("PATCH", "/api/v1/agents/"+e.agentID, e.key, map[string]any{"name": "Changed", "analysisPlan": plan})
		if code != 500 || strings.TrimSpace(string(b)) != generic {
			t.Errorf("patch with a refused plan write (%v): %d %s", plan, code, b)
		}
	}
	e.client = checked

	if n := countAgents(); n != agents {
		t.Fatalf("a create whose plan write failed stored its agent: %d agents, want %d", n, agents)
	}
	if _, _, after := e.do("GET", "/api/v1/agents/"+e.agentID, e.key, nil); string(after) != string(before) {
		t.Fatalf("a patch whose plan write failed changed the agent:\n%s\nwas\n%s", after, before)
	}

	// The retry, once the plan can be written, makes one agent with its plan.
	drop()
	var created agentWithPlan
	if code := e.doJSON("POST", "/api/v1/agents", e.key, map[string]any{"name": "Half", "type": "chat", "analysisPlan": bookingPlan}, &created); code != 201 ||
		!strings.Contains(string(created.Data.AnalysisPlan), "pass_fail") {
		t.Fatalf("retry: %d %s", code, created.Data.AnalysisPlan)
	}
	if n := countAgents(); n != agents+1 {
		t.Fatalf("after the retry %d agents, want %d", n, agents+1)
	}
}

// refusePlanWrites makes every write to agent_analysis_plans fail, on
// either engine, until the returned func drops the trigger.
func refusePlanWrites(t *testing.T, db *storage.Stores) (drop func()) {
	t.Helper()
	create := []string{
		`CREATE TRIGGER refuse_plan_insert BEFORE INSERT ON agent_analysis_plans BEGIN SELECT RAISE(ABORT, 'plan write refused by the test'); END`,
		`CREATE TRIGGER refuse_plan_update BEFORE UPDATE ON agent_analysis_plans BEGIN SELECT RAISE(ABORT, 'plan write refused by the test'); END`,
		`CREATE TRIGGER refuse_plan_delete BEFORE DELETE ON agent_analysis_plans BEGIN SELECT RAISE(ABORT, 'plan write refused by the test'); END`,
	}
	remove := []string{`DROP TRIGGER refuse_plan_insert`, `DROP TRIGGER refuse_plan_update`, `DROP TRIGGER refuse_plan_delete`}
	if db.Postgres() {
		create = []string{
			`CREATE FUNCTION refuse_plan_write() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'plan write refused by the test'; END $$`,
			`CREATE TRIGGER refuse_plan_write BEFORE INSERT OR UPDATE OR DELETE ON agent_analysis_plans
			FOR EACH ROW EXECUTE FUNCTION refuse_plan_write()`,
		}
		remove = []string{`DROP TRIGGER refuse_plan_write ON agent_analysis_plans`, `DROP FUNCTION refuse_plan_write()`}
	}
	run := func(stmts []string) {
		t.Helper()
		ctx := context.Background()
		err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
			for _, s := range stmts {
				if _, err := tx.ExecContext(ctx, s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	run(create)
	return func() { run(remove) }
}
