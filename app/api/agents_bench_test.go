package api

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/storage/dashstore"
)

// BenchmarkListWorkers is GET /api/v2/agents through the real HTTP server
// for an organization with 200 agents (one job each) and 100,000 calls in
// every state. Target: under 20 ms per request (README "Agents").
//
//	go test ./app -run '^$' -bench ListWorkers -benchtime 200x -count 3
func BenchmarkListWorkers(b *testing.B) {
	e := newTestEnv(b)
	ctx := context.Background()
	const nAgents, nCalls = 200, 100_000
	agentIDs := make([]string, nAgents)
	for i := range agentIDs {
		typ, phones := "voice", []string{fmt.Sprintf("+1555%07d", i)}
		if i%4 == 0 {
			typ, phones = "chat", nil
		}
		a, err := e.app.srv.agents.Create(ctx, e.orgID, agents.Input{Name: agentPtr(fmt.Sprint("agent ", i)), Type: &typ, PhoneNumbers: &phones,
			Instructions: agentPtr(string(make([]byte, 4000)))})
		if err != nil {
			b.Fatal(err)
		}
		agentIDs[i] = a.ID
		if _, err := e.app.srv.agents.CreateJob(ctx, e.orgID, agents.JobInput{AgentID: &a.ID, Name: agentPtr("job")}); err != nil {
			b.Fatal(err)
		}
	}
	// No initiated, scheduled or queued rows: the running scheduler and dial
	// queue would take those over during the benchmark.
	statuses := []string{"completed", "completed", "completed", "failed", "no_answer", "busy", "ringing", "active", "connecting", "cancelled"}
	start := time.Now().Add(-30 * 24 * time.Hour)
	for off := 0; off < nCalls; off += 10_000 {
		batch := make([]dashstore.SeedCall, 0, 10_000)
		for i := off; i < off+10_000; i++ {
			batch = append(batch, dashstore.SeedCall{OrgID: e.orgID, AgentID: agentIDs[i%nAgents], Status: statuses[(i/nAgents)%len(statuses)],
				CreatedAt: start.Add(time.Duration(i) * time.Second)})
		}
		if _, err := e.db.Dashboard.SeedCalls(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	// One checked request before timing: every worker, with its stats.
	var l workerList
	code, _, body := e.do("GET", "/api/v2/agents", e.key, nil)
	if err := json.Unmarshal(body, &l); err != nil || code != 200 || l.Data.Count != nAgents || l.Data.Agents[0].TotalActions != 300 ||
		l.Data.Agents[0].ReliabilityScore != "0.5000" || len(l.Data.Agents[0].AssignedJobs) != 1 {
		b.Fatalf("status %d count %d first %+v", code, l.Data.Count, l.Data.Agents[0])
	}
	b.ResetTimer()
	for b.Loop() {
		if code, _, _ := e.do("GET", "/api/v2/agents", e.key, nil); code != 200 {
			b.Fatalf("status %d", code)
		}
	}
}

func agentPtr[T any](v T) *T { return &v }
