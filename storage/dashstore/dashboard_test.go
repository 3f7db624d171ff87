package dashstore_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// seedWeek stores n calls of a week (dashstore.WeekOfCalls) in a new organization.
func seedWeek(t testing.TB, n int, now time.Time) (*storage.Stores, string) {
	t.Helper()
	db, orgID := storetest.WithOrg(t)
	ctx := context.Background()
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: orgID, Name: "A", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	calls := dashstore.WeekOfCalls(orgID, a.ID, n, now)
	for len(calls) > 0 {
		k := min(len(calls), 10_000)
		if err := db.Dashboard.SeedHistory(ctx, calls[:k]); err != nil {
			t.Fatal(err)
		}
		calls = calls[k:]
	}
	return db, orgID
}

// The aggregates agree with a count of the seeded calls, and another
// organization sees none of them.
func TestDashboardAggregates(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)
	db, orgID := seedWeek(t, 1000, now)
	seeded := dashstore.WeekOfCalls(orgID, "", 1000, now)
	since := now.Add(-24 * time.Hour).Truncate(time.Hour)
	wantEnded, wantAnswered, wantQueued := map[string]int{}, 0, 0
	perHour := 0
	for _, c := range seeded {
		if c.EndedAt != nil && !c.EndedAt.Before(since) {
			wantEnded[c.Status]++
			if c.AnsweredAt != nil {
				wantAnswered++
			}
		}
		if c.EndedAt != nil {
			perHour++
		}
		if c.Status == callstore.CallQueued {
			wantQueued++
		}
	}
	o, err := db.Dashboard.CallOverview(ctx, orgID, since)
	if err != nil {
		t.Fatal(err)
	}
	for st, n := range wantEnded {
		if o.EndedByStatus[st] != n {
			t.Errorf("ended %s: %d, want %d", st, o.EndedByStatus[st], n)
		}
	}
	if o.Answered != wantAnswered || o.Queued != wantQueued || o.Active != 20 || o.Scheduled != 30 {
		t.Errorf("overview %+v: want answered %d queued %d active 20 scheduled 30", o, wantAnswered, wantQueued)
	}
	hours, err := db.Dashboard.CallsPerHour(ctx, orgID, now.Add(-8*24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, h := range hours {
		sum += h.N
		if h.Hour.Minute() != 0 || !callstore.CallFinal(h.Status) {
			t.Fatalf("bad bucket %+v", h)
		}
	}
	if sum != perHour {
		t.Errorf("per hour sums to %d, want %d", sum, perHour)
	}
	bs, total, err := db.Dashboard.BatchProgresses(ctx, orgID, 1, 0)
	if err != nil || total != 2 || len(bs) != 1 || bs[0].BatchID != "batch-0001" || bs[0].Total != 200 || bs[0].AgentName != "A" {
		t.Fatalf("batches %+v total %d err %v", bs, total, err)
	}
	// The rollup follows cancels and deletes.
	var queuedID string
	if err := db.Conn().Reader().QueryRow("SELECT id FROM calls WHERE status = 'queued' LIMIT 1").Scan(&queuedID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Calls.CancelCall(ctx, orgID, queuedID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec("DELETE FROM calls WHERE id IN (SELECT id FROM calls WHERE status = 'completed' LIMIT 7)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec("UPDATE calls SET answered_at = NULL WHERE id IN (SELECT id FROM calls WHERE status = 'completed' LIMIT 3)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const kept = `SELECT org_id, hour, status, calls, answered FROM call_hours WHERE calls > 0`
	const recount = `SELECT org_id, ended_at / 3600000, status, count(*), count(answered_at) FROM calls
		WHERE ended_at IS NOT NULL AND status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy') GROUP BY 1, 2, 3`
	var diff int
	if err := db.Conn().Reader().QueryRow("SELECT (SELECT count(*) FROM (" + kept + " EXCEPT " + recount + ") a) + (SELECT count(*) FROM (" +
		recount + " EXCEPT " + kept + ") b)").Scan(&diff); err != nil || diff != 0 {
		t.Fatalf("call_hours differs from a recount in %d rows (%v)", diff, err)
	}
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := db.Dashboard.CallOverview(ctx, other.ID, since); o.Ended() != 0 || o.Queued != 0 {
		t.Fatalf("other org sees %+v", o)
	}
	if bs, n, _ := db.Dashboard.BatchProgresses(ctx, other.ID, 10, 0); len(bs) != 0 || n != 0 {
		t.Fatalf("other org sees batches %+v", bs)
	}
}

// BenchmarkDashboardAggregates is the overview's queries over 100,000 calls.
func BenchmarkDashboardAggregates(b *testing.B) {
	now := time.Now().UTC()
	db, orgID := seedWeek(b, 100_000, now)
	ctx := context.Background()
	b.Run("overview", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.Dashboard.CallOverview(ctx, orgID, now.Add(-24*time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("perHour", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.Dashboard.CallsPerHour(ctx, orgID, now.Add(-7*24*time.Hour), now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batches", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := db.Dashboard.BatchProgresses(ctx, orgID, 20, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
