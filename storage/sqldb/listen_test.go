package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
)

var listenSchema = fstest.MapFS{
	"migrations/0001_t.sql":          {Data: []byte("CREATE TABLE t (v TEXT);")},
	"migrations/postgres/0001_t.sql": {Data: []byte("CREATE TABLE t (v TEXT);")},
}

func openListenDB(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path, listenSchema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Notify wakes this process's waiters once the transaction commits, and
// never for one rolled back; the channel's version moves with it. On SQLite
// nothing is live (other processes are found by polling).
func TestNotifyWakesOnCommitOnly(t *testing.T) {
	ctx := context.Background()
	db := openListenDB(t, dbtest.Path(t, "t.db"))
	db.Wake(ChanKB) // starts the listener
	if db.Postgres() {
		// Its coming up wakes every waiter (a notification may have been
		// missed while it was down): wait for that first.
		testkit.Eventually(t, 10*time.Second, func() bool { _, live := db.lis.Version(ChanKB); return live },
			"the listener did not come up")
	}
	woke := db.Wake(ChanKB)
	v0, _ := db.lis.Version(ChanKB)
	err := db.Write(ctx, func(tx *sql.Tx) error {
		db.Notify(tx, ChanKB, ChanKB)
		return errors.New("rolled back")
	})
	if err == nil || closed(woke) {
		t.Fatalf("a rolled back transaction woke the waiters (err %v)", err)
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		db.Notify(tx, ChanKB)
		_, err := tx.ExecContext(ctx, "INSERT INTO t (v) VALUES ('x')")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !closed(woke) {
		t.Fatal("a commit with a note did not wake the waiters")
	}
	if v, _ := db.lis.Version(ChanKB); v == v0 {
		t.Fatal("the version did not move")
	}
	if !dbtest.Postgres() {
		if _, live := db.lis.Version(ChanKB); live || db.IdlePoll(time.Second) != time.Second {
			t.Fatal("SQLite: notifications do not come from other processes; the poll must stay")
		}
	}
}

// On PostgreSQL a NOTIFY from another connection reaches the listener's
// waiters; a listener killed by the server comes back by itself.
func TestListenerHearsOtherProcesses(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("LISTEN/NOTIFY: PostgreSQL only")
	}
	ctx := context.Background()
	path := dbtest.Path(t, "")
	db := openListenDB(t, path)
	other := openListenDB(t, path)
	within := func(what string, ok func() bool) {
		t.Helper()
		testkit.Eventually(t, 5*time.Second, ok, "%s: not within 5 s", what)
	}
	db.Wake(ChanEvents) // starts the listener
	within("up", db.lis.Up)
	if db.IdlePoll(time.Second) != WakePoll {
		t.Fatal("listener up: the poll should be the safety poll")
	}
	for round := range 2 {
		woke := db.Wake(ChanEvents)
		if _, err := other.w.ExecContext(ctx, "SELECT pg_notify(?, '')", ChanEvents); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		select {
		case <-woke:
			t.Logf("round %d: woken %s after the NOTIFY", round, time.Since(start).Round(time.Microsecond))
		case <-time.After(time.Second):
			t.Fatalf("round %d: no wake-up within 1 s of another connection's NOTIFY", round)
		}
		if round == 1 {
			break
		}
		pid := db.lis.BackendPID()
		woke = db.Wake(ChanCalls)
		if _, err := other.w.ExecContext(ctx, "SELECT pg_terminate_backend(?)", int64(pid)); err != nil {
			t.Fatal(err)
		}
		select { // waiters wake when it goes down: they may have missed something
		case <-woke:
		case <-time.After(5 * time.Second):
			t.Fatal("the listener's loss woke no waiter")
		}
		within("back up", func() bool { return db.lis.Up() && db.lis.BackendPID() != pid })
	}
}
