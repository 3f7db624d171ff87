package api

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// On PostgreSQL authentication reads no row in steady state: the auth
// epoch comes from the listener-backed cache and the key from the key
// cache filed under it. pg_stat_statements counts the server's statements
// that read auth_epoch or api_keys over 50 authenticated GETs.
func TestAuthReadsNoRowInSteadyState(t *testing.T) {
	dbtest.SkipOnSQLite(t, "SQLite answers the epoch from its wal-index header")
	e := newTestEnv(t)
	raw := dbtest.Open(t, e.db.Path())
	defer raw.Close()
	if _, err := raw.Exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	authReads := func() int {
		t.Helper()
		var n sql.NullInt64
		err := raw.QueryRow(`SELECT sum(calls) FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND (query LIKE '%FROM auth_epoch%' OR query LIKE '%FROM api_keys%') AND query NOT LIKE '%pg_stat_statements%'`).Scan(&n)
		if err != nil && strings.Contains(err.Error(), "shared_preload_libraries") {
			t.Skipf("pg_stat_statements is not loaded (.ci/postgres.sh preloads it): %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		return int(n.Int64)
	}
	authReads()
	testkit.Eventually(t, 5*time.Second, e.db.Conn().Listener().Up, "listener not up")
	for range 3 { // warm the caches
		if code, _, b := e.do("GET", "/api/v1/agents", e.key, nil); code != 200 {
			t.Fatalf("GET: %d %s", code, b)
		}
	}
	before := authReads()
	for range 50 {
		if code, _, b := e.do("GET", "/api/v1/agents", e.key, nil); code != 200 {
			t.Fatalf("GET: %d %s", code, b)
		}
	}
	if n := authReads() - before; n != 0 {
		t.Errorf("50 authenticated GETs read the auth epoch or a key %d times, want 0", n)
	}
}
