package callstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/kbstore"
)

// rowsRead is how many rows PostgreSQL counted read from table, by
// sequential scans and through its indexes.
func rowsRead(t *testing.T, db *storage.Stores, table string) int64 {
	t.Helper()
	var n int64
	if err := db.Conn().Reader().QueryRowContext(context.Background(), `SELECT t.seq_tup_read
		+ coalesce((SELECT sum(i.idx_tup_read) FROM pg_stat_user_indexes i WHERE i.relid = t.relid), 0)
		FROM pg_stat_user_tables t WHERE t.relname = ?`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// closeFlushed closes gen, whose sessions are named app, and waits until
// its backends have exited: a backend's counts reach the statistics then.
func closeFlushed(t *testing.T, db, gen *storage.Stores, app string) {
	t.Helper()
	gen.Close()
	testkit.Within(5*time.Second, func() bool {
		var n int
		db.Conn().Reader().QueryRowContext(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", app).Scan(&n)
		return n == 0
	})
	// A backend flushes its counts as it exits, after it has left
	// pg_stat_activity: nothing shows when that is done.
	time.Sleep(100 * time.Millisecond)
}

// The reads every process makes at every wake-up (the scheduler's poll and
// next due time, the dial queue's next due time, the knowledge worker's
// look for work) stay cheap when their generic plans were made while the
// tables were nearly empty, as in a new install, and the tables then grew
// before anything analyzed them: PostgreSQL keeps such a plan until the
// table is next analyzed. The scheduler's min() became an aggregate over
// every scheduled call (8 ms a wake-up at 54,000 calls, in a benchmark's
// first seconds), the knowledge worker's a read of every source.
func TestWakeUpReadsStayCheapAsTablesGrow(t *testing.T) {
	dbtest.SkipOnSQLite(t, "its query plans")
	ctx := context.Background()
	path := dbtest.Path(t, "agentd.db")
	db := storetest.Open(t, path)
	for _, tb := range []string{"calls", "kb_sources"} { // an ANALYZE would make new plans
		if _, err := db.Conn().Reader().ExecContext(ctx, "ALTER TABLE "+tb+" SET (autovacuum_enabled = off)"); err != nil {
			t.Fatal(err)
		}
	}
	o, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: o.ID, Name: "a", Type: "voice", Status: "active", PhoneNumbers: []string{"+15550001110"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := db.Calls.CreateCalls(ctx, []callstore.Call{{OrgID: o.ID, AgentID: a.ID, Status: callstore.CallScheduled,
		PhoneNumber: "+14155550001", DueAt: now.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	coll, err := db.KB.CreateCollection(ctx, o.ID, "docs", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.KB.UpsertSource(ctx, o.ID, coll.ID, kbstore.SourceInput{ExternalID: "x", Title: "x", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE kb_sources SET status = 'completed'")
		return err
	}); err != nil {
		t.Fatal(err)
	}

	app := fmt.Sprintf("growth-%d", time.Now().UnixNano())
	gen, err := storage.Open(ctx, path+"&plan_cache_mode=force_generic_plan&application_name="+app)
	if err != nil {
		t.Fatal(err)
	}
	wakeUp := func() {
		t.Helper()
		if _, err := gen.Calls.PromoteDueCalls(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		for _, st := range []string{callstore.CallScheduled, callstore.CallQueued} {
			if _, _, err := gen.Calls.NextDue(ctx, st); err != nil {
				t.Fatal(err)
			}
		}
		if jobs, _, err := gen.KB.ClaimKBSources(ctx, "w", time.Minute, 10, 1<<20); err != nil || len(jobs) > 0 {
			t.Fatalf("knowledge claim: %d jobs, %v", len(jobs), err)
		}
	}
	for range 3 { // the plans are made here, on one row each
		wakeUp()
	}
	fill(t, db, "calls", "org_id = '"+o.ID+"'", 60000, `jsonb_build_object('id', 'bulk-' || g, 'org_id', 'bulk-' || g % 100,
		'status', CASE WHEN g % 3 = 0 THEN 'scheduled' ELSE 'completed' END, 'due_at', (c.j->>'due_at')::bigint + 86400000 + g)`)
	fill(t, db, "kb_sources", "org_id = '"+o.ID+"'", 20000, `jsonb_build_object('id', 'bulk-' || g, 'external_id', 'bulk-' || g,
		'status', CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'completed' END,
		'retry_at', CASE WHEN g % 10 = 0 THEN (c.j->>'created_at')::bigint + 86400000 + g END)`)
	before := map[string]int64{"calls": rowsRead(t, db, "calls"), "kb_sources": rowsRead(t, db, "kb_sources")}
	for range 3 {
		wakeUp()
	}
	closeFlushed(t, db, gen, app)
	for tb, n := range before {
		if d := rowsRead(t, db, tb) - n; d > 100 {
			t.Errorf("three wake-ups read %d rows of %s", d, tb)
		}
	}
}
