package orgstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
)

// On PostgreSQL the auth epoch is answered from memory while the listener
// is up, and the cache follows the auth channel: a change through another
// handle (another process) reaches it by NOTIFY; while the listening
// connection is gone every call queries, and once it is back the cache
// serves again. The raw connection below moves the epoch without a NOTIFY,
// which only a query can see: that tells a cached answer from a read.
func TestAuthEpochCacheFollowsListener(t *testing.T) {
	dbtest.SkipOnSQLite(t, "LISTEN/NOTIFY (SQLite answers from its wal-index header)")
	ctx := context.Background()
	h := storetest.Handles(t, 2)
	db, other := h[0], h[1]
	acme, boss := keyOrg(t, db, "acme")
	raw := dbtest.Open(t, db.Path())
	defer raw.Close()
	raw.SetMaxOpenConns(1) // one connection, kept while the database refuses new ones
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	epoch := func() int64 {
		t.Helper()
		n, err := db.AuthEpoch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	lis := db.Conn().Listener()
	within := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		testkit.Eventually(t, d, ok, "%s: not within %s", what, d)
	}
	epoch() // starts the listener
	within("listener up", 5*time.Second, lis.Up)

	// Cached: a silent change is not seen...
	e0 := epoch()
	exec("UPDATE auth_epoch SET n = n + 1000")
	for range 20 {
		if n := epoch(); n != e0 {
			t.Fatalf("epoch %d read again without a notification (cached %d)", n, e0)
		}
	}
	// ...until the auth channel says so.
	exec("SELECT pg_notify('agentd_auth', '')")
	within("a notification drops the cache", time.Second, func() bool { return epoch() == e0+1000 })

	// A key revoked and a user removed through the other handle.
	k := testKey("ci")
	k.OrgID, k.UserID = acme.ID, boss.ID
	created, err := other.Orgs.CreateKey(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, change := range []struct {
		what string
		do   func() error
	}{
		{"key revoked elsewhere", func() error { return other.Orgs.RevokeKey(ctx, acme.ID, created.ID) }},
		{"user removed elsewhere", func() error {
			if _, err := other.Orgs.AddUser(ctx, acme.ID, "dev@acme.test", "admin"); err != nil {
				return err
			}
			return other.Orgs.RemoveUser(ctx, acme.ID, "dev@acme.test")
		}},
	} {
		before := epoch()
		if err := change.do(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		within(change.what, time.Second, func() bool { return epoch() != before })
		t.Logf("%s: seen after %s", change.what, time.Since(start).Round(time.Microsecond))
	}

	// The listening connection ends, and the database refuses new
	// connections for a while: the cache is dropped, every call reads.
	admin, err := sql.Open("pgx", os.Getenv(dbtest.Env)) // ALTER DATABASE runs from another one
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	allow := func(on bool) {
		t.Helper()
		if _, err := admin.ExecContext(ctx, fmt.Sprintf(`ALTER DATABASE "%s" ALLOW_CONNECTIONS %v`, dbName(t, db), on)); err != nil {
			t.Fatal(err)
		}
	}
	allow(false)
	defer allow(true)
	pid := lis.BackendPID()
	exec("SELECT pg_terminate_backend($1)", int64(pid))
	within("listener down", 5*time.Second, func() bool { return !lis.Up() })
	for i := range 3 {
		exec("UPDATE auth_epoch SET n = n + 1")
		want := epochOf(t, raw)
		if n := epoch(); n != want {
			t.Fatalf("listener down, change %d: epoch %d, want %d (a stale cache)", i, n, want)
		}
	}
	// Back: the cache serves again (a silent change is not seen).
	allow(true)
	within("listener back", 5*time.Second, lis.Up)
	if lis.BackendPID() == pid {
		t.Fatal("the same backend after a restart")
	}
	e1 := epoch()
	exec("UPDATE auth_epoch SET n = n + 1")
	if n := epoch(); n != e1 {
		t.Fatalf("listener back: epoch %d read again, want the cached %d", n, e1)
	}
}

func epochOf(t *testing.T, raw *sql.DB) int64 {
	t.Helper()
	var n int64
	if err := raw.QueryRow("SELECT n FROM auth_epoch").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dbName is the PostgreSQL database the stores run on.
func dbName(t *testing.T, db *storage.Stores) string {
	u, err := url.Parse(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}
