package analysisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/dashstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// agentWithCalls creates a voice agent, with an analysis plan when plan is
// set, and n completed calls of it.
func agentWithCalls(tb testing.TB, db *storage.Stores, org string, n int, plan bool) (string, []string) {
	tb.Helper()
	ctx := context.Background()
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "voice", Status: "active"})
	if err != nil {
		tb.Fatal(err)
	}
	if plan {
		if err := db.Analyses.SavePlan(ctx, org, a.ID, json.RawMessage(`{"summary":{"enabled":true}}`)); err != nil {
			tb.Fatal(err)
		}
	}
	seed := make([]dashstore.SeedCall, n)
	for i := range seed {
		seed[i] = dashstore.SeedCall{OrgID: org, AgentID: a.ID, Status: "completed", Attempts: 1}
	}
	ids, err := db.Dashboard.SeedCalls(ctx, seed)
	if err != nil {
		tb.Fatal(err)
	}
	return a.ID, ids
}

// ended is agentWithCalls with a transcript recorded on each call (which
// queues its analysis in the same transaction).
func ended(t *testing.T, db *storage.Stores, org string, n int, plan bool) (string, []string) {
	t.Helper()
	ctx := context.Background()
	agent, ids := agentWithCalls(t, db, org, n, plan)
	tr := json.RawMessage(`[{"role":"user","text":"Hi.","at":"2026-06-10T14:00:02.000Z"}]`)
	for _, id := range ids {
		if err := db.Calls.SaveCallResult(ctx, org, callstore.CallResult{CallID: id, Transcript: tr}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return agent, ids
}

// A plan is the organization's agent's: saved, read, removed; another
// organization's agent is not found either way.
func TestPlan(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "a", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := db.Analyses.Plan(ctx, org, a.ID); err != nil || p != nil {
		t.Fatalf("no plan yet: %s %v", p, err)
	}
	for _, plan := range []string{`{"summary":{"enabled":true}}`, `{"summary":{"enabled":false}}`} {
		if err := db.Analyses.SavePlan(ctx, org, a.ID, json.RawMessage(plan)); err != nil {
			t.Fatal(err)
		}
		if p, err := db.Analyses.Plan(ctx, org, a.ID); err != nil || string(p) != plan {
			t.Fatalf("plan %s, %v; want %s", p, err, plan)
		}
	}
	if err := db.Analyses.SavePlan(ctx, other.ID, a.ID, json.RawMessage(`{}`)); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("save as another org: %v", err)
	}
	if _, err := db.Analyses.Plan(ctx, other.ID, a.ID); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("read as another org: %v", err)
	}
	if err := db.Analyses.SavePlan(ctx, org, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if p, err := db.Analyses.Plan(ctx, org, a.ID); err != nil || p != nil {
		t.Fatalf("removed plan: %s %v", p, err)
	}
}

// A call's transcript queues its analysis only when its agent has a plan;
// the analysis is the organization's alone.
func TestEnqueueOnTranscript(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	_, without := ended(t, db, org, 1, false)
	agent, with := ended(t, db, org, 1, true)
	if _, err := db.Analyses.Get(ctx, org, analysisstore.KindCall, without[0]); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("queued without a plan: %v", err)
	}
	a, err := db.Analyses.Get(ctx, org, analysisstore.KindCall, with[0])
	if err != nil || a.Status != analysisstore.StatusPending || a.AgentID != agent || a.Result != nil || a.AnalyzedAt != nil {
		t.Fatalf("queued: %+v %v", a, err)
	}
	if _, err := db.Analyses.Get(ctx, "other-org", analysisstore.KindCall, with[0]); !errors.Is(err, sqldb.ErrNotFound) {
		t.Fatalf("another org: %v", err)
	}
	if due, err := db.Analyses.NextDue(ctx); err != nil || due.IsZero() || due.After(time.Now()) {
		t.Fatalf("next due %v, %v", due, err)
	}
}

// Workers claiming at once never take the same row; a lost lease cannot
// finish a row; a finished row is not claimed again and its result reads
// back with the event written beside it.
func TestClaimFinish(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	_, ids := ended(t, db, org, 6, true)
	var mu sync.Mutex
	held := map[string]string{}
	var wg sync.WaitGroup
	for _, owner := range []string{"w1", "w2", "w3"} {
		wg.Go(func() {
			jobs, err := db.Analyses.Claim(ctx, owner, time.Minute, 4)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, j := range jobs {
				if prev, ok := held[j.SubjectID]; ok {
					t.Errorf("%s claimed by %s and %s", j.SubjectID, prev, owner)
				}
				held[j.SubjectID] = owner
				if string(j.Plan) != `{"summary":{"enabled":true}}` || j.OrgID != org {
					t.Errorf("job %+v", j)
				}
			}
		})
	}
	wg.Wait()
	if len(held) != len(ids) {
		t.Fatalf("claimed %d of %d", len(held), len(ids))
	}
	if jobs, err := db.Analyses.Claim(ctx, "w4", time.Minute, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("claimed under live leases: %d %v", len(jobs), err)
	}
	j := analysisstore.Job{Kind: analysisstore.KindCall, SubjectID: ids[0]}
	owner := held[ids[0]]
	ev := sqldb.PendingEvent{Type: "call.analyzed", Subject: ids[0], OrgID: org, Data: map[string]string{"id": ids[0]}}
	if done, err := db.Analyses.Finish(ctx, j, owner+"-not", analysisstore.StatusCompleted, json.RawMessage(`{}`), ev); err != nil || done {
		t.Fatalf("finished without the lease: %v %v", done, err)
	}
	if done, err := db.Analyses.Finish(ctx, j, owner, analysisstore.StatusCompleted, json.RawMessage(`{"summary":"ok"}`), ev); err != nil || !done {
		t.Fatalf("finish: %v %v", done, err)
	}
	a, err := db.Analyses.Get(ctx, org, analysisstore.KindCall, ids[0])
	if err != nil || a.Status != analysisstore.StatusCompleted || string(a.Result) != `{"summary":"ok"}` || a.Attempts != 1 || a.AnalyzedAt == nil {
		t.Fatalf("finished: %+v %v", a, err)
	}
	if done, err := db.Analyses.Finish(ctx, j, owner, analysisstore.StatusCompleted, json.RawMessage(`{}`), ev); err != nil || done {
		t.Fatalf("finished twice: %v %v", done, err)
	}
}

// A retried row waits until its due time; an expired lease (a killed
// worker) lets another worker take the row; Renew keeps a lease alive.
func TestRetryAndLease(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	ended(t, db, org, 2, true)
	jobs, err := db.Analyses.Claim(ctx, "w1", time.Minute, 1)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d %v", len(jobs), err)
	}
	due := time.Now().Add(time.Hour)
	if err := db.Analyses.Retry(ctx, jobs[0], "w1", due); err != nil {
		t.Fatal(err)
	}
	// The other row: claimed with a lease already run out, then renewed.
	short, err := db.Analyses.Claim(ctx, "w2", -time.Second, 5)
	if err != nil || len(short) != 1 || short[0].SubjectID == jobs[0].SubjectID {
		t.Fatalf("claim beside the retried row: %+v %v", short, err)
	}
	again, err := db.Analyses.Claim(ctx, "w3", time.Minute, 5)
	if err != nil || len(again) != 1 || again[0].SubjectID != short[0].SubjectID {
		t.Fatalf("expired lease not taken over: %+v %v", again, err)
	}
	if err := db.Analyses.Renew(ctx, again, "w3", time.Hour); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Analyses.Claim(ctx, "w4", time.Minute, 5); err != nil || len(n) != 0 {
		t.Fatalf("claimed a renewed or not yet due row: %+v %v", n, err)
	}
	a, err := db.Analyses.Get(ctx, org, analysisstore.KindCall, jobs[0].SubjectID)
	if err != nil || a.Attempts != 1 || a.Status != analysisstore.StatusPending || a.DueAt.Sub(due).Abs() > time.Millisecond {
		t.Fatalf("retried: %+v %v (due %v)", a, err, due)
	}
}

// Reanalyze queues again the calls a filter selects that have a
// transcript and a plan, and refuses an empty filter.
func TestReanalyze(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	agent, ids := ended(t, db, org, 3, true)
	jobs, err := db.Analyses.Claim(ctx, "w", time.Minute, 10)
	if err != nil || len(jobs) != 3 {
		t.Fatalf("claim: %d %v", len(jobs), err)
	}
	for _, j := range jobs {
		ev := sqldb.PendingEvent{Type: "call.analyzed", Subject: j.SubjectID, OrgID: org, Data: map[string]string{"id": j.SubjectID}}
		if done, err := db.Analyses.Finish(ctx, j, "w", analysisstore.StatusCompleted, json.RawMessage(`{}`), ev); err != nil || !done {
			t.Fatalf("finish: %v %v", done, err)
		}
	}
	if _, err := db.Analyses.Reanalyze(ctx, org, analysisstore.CallFilter{}); !errors.Is(err, sqldb.ErrConflict) {
		t.Fatalf("empty filter: %v", err)
	}
	if n, err := db.Analyses.Reanalyze(ctx, "other-org", analysisstore.CallFilter{AgentID: agent}); err != nil || n != 0 {
		t.Fatalf("another org requeued %d, %v", n, err)
	}
	if n, err := db.Analyses.Reanalyze(ctx, org, analysisstore.CallFilter{IDs: ids[:2]}); err != nil || n != 2 {
		t.Fatalf("by ids: %d %v", n, err)
	}
	a, err := db.Analyses.Get(ctx, org, analysisstore.KindCall, ids[0])
	if err != nil || a.Status != analysisstore.StatusPending || a.Attempts != 0 {
		t.Fatalf("requeued: %+v %v", a, err)
	}
	if a, err := db.Analyses.Get(ctx, org, analysisstore.KindCall, ids[2]); err != nil || a.Status != analysisstore.StatusCompleted {
		t.Fatalf("left alone: %+v %v", a, err)
	}
	if n, err := db.Analyses.Reanalyze(ctx, org, analysisstore.CallFilter{AgentID: agent, Status: "completed"}); err != nil || n != 3 {
		t.Fatalf("by agent: %d %v", n, err)
	}
}
