package eventstore_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/sqldb"
)

// readable counts the events a read sees below the log's horizon when a
// transaction running at the read's start ends before the read looks at
// pg_stat_activity: the read sleeps in between, while end runs.
func readable(t *testing.T, db *storage.Stores, end func()) int {
	t.Helper()
	go func() { // once the read is in its pg_sleep
		testkit.Within(5*time.Second, func() bool {
			var n int
			db.Conn().Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event = 'PgSleep' AND datname = current_database()`).Scan(&n)
			return n > 0
		})
		end()
	}()
	var slept sql.NullString
	var n int
	if err := db.Conn().Reader().QueryRowContext(context.Background(), `SELECT pg_sleep(0.5)::text,
		(SELECT count(*) FROM events WHERE xid < `+sqldb.LogHorizon+`)`).Scan(&slept, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// logEvent commits one event through the stores.
func logEvent(t *testing.T, db *storage.Stores, org string) {
	t.Helper()
	ctx := context.Background()
	if err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
		_, err := db.Conn().InsertEvents(ctx, tx, []sqldb.PendingEvent{{Type: "test.event", Subject: "s", OrgID: org, Data: map[string]any{}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// A transaction of another database of the cluster that ends between a
// read's snapshot and its look at pg_stat_activity no longer holds the
// log back: CI's packages share one cluster, and a fan-out found nothing
// to send right after an event was logged (TestPruneEvents, "claimed 0").
// One of this database that wrote events still does: its events are not
// in the read's snapshot, and a cursor must not pass them.
func TestLogHorizonAndTransactionsEndedMeanwhile(t *testing.T) {
	dbtest.SkipOnSQLite(t, "the horizon is PostgreSQL's")
	ctx := context.Background()
	db, org := storetest.WithOrg(t)

	other := dbtest.Open(t, dbtest.Path(t, "other.db"))
	defer other.Close()
	elsewhere, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elsewhere.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil { // an older id, running
		t.Fatal(err)
	}
	logEvent(t, db, org)
	if n := readable(t, db, func() { elsewhere.Commit() }); n != 1 {
		t.Errorf("another database's transaction ended meanwhile: %d events readable, want 1", n)
	}

	here, err := db.Conn().Reader().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := here.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	logEvent(t, db, org) // newer than here's id
	if n := readable(t, db, func() {
		if _, err := here.ExecContext(ctx, `INSERT INTO events (id, org_id, type, subject, data, created_at)
			VALUES ('late', $1, 'test.late', 's', '{}', 0)`, org); err != nil {
			t.Error(err)
		}
		here.Commit()
	}); n != 1 {
		t.Errorf("this database's event-writing transaction ended meanwhile: %d events readable, want 1 (the first; not past its late event)", n)
	}
}
