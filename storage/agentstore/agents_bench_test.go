package agentstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

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
		batch := make([]callstore.SeedCall, 0, 10_000)
		for i := off; i < off+10_000; i++ {
			batch = append(batch, callstore.SeedCall{OrgID: org, AgentID: agents[i%200], Status: callStatuses[i%len(callStatuses)]})
		}
		if _, err := db.Calls.SeedCalls(ctx, batch); err != nil {
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
