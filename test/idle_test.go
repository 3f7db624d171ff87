package test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// Three idle agentd processes on one PostgreSQL database wait on
// LISTEN/NOTIFY instead of polling: over 10 s they run (close to) no write
// transaction. pg_stat_statements counts every statement of the database,
// so nothing a worker does escapes it; a BEGIN is a write transaction
// (reads run as single statements).
func TestIdleProcessesMakeNoWrites(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("needs " + dbtest.Env + ": idle processes on one PostgreSQL database")
	}
	if testing.Short() {
		t.Skip("10 s of idle time")
	}
	dir := t.TempDir()
	url := dbtest.Path(t, "")
	for i := range 3 {
		startOn(t, dir, url, "--dialer", "sim", "--dial-log", filepath.Join(dir, fmt.Sprintf("dial-%d.log", i)))
	}
	stats := openStatements(t, url)
	// Spans of time, not waits for an event: start-up work (recovery, queue
	// checks) has no end to wait on, and the idle period is what is measured.
	time.Sleep(2 * time.Second)
	before := stats.snapshot(t)
	time.Sleep(10 * time.Second) // the idle period measured
	diff := stats.since(t, before)
	writes, total := 0, 0
	var lines []string
	for q, n := range diff {
		total += n
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(q)), "begin") {
			writes += n
		}
		lines = append(lines, fmt.Sprintf("%5d  %s", n, strings.Join(strings.Fields(q), " ")))
	}
	sort.Strings(lines)
	t.Logf("3 idle processes, 10 s: %d write transactions, %d statements\n%s", writes, total, strings.Join(lines, "\n"))
	if writes >= 5 {
		t.Errorf("%d write transactions in 10 s of idle time, want < 5", writes)
	}
}

// statements reads pg_stat_statements for one database.
type statements struct{ db *sql.DB }

// openStatements connects to url with pg_stat_statements (which
// .ci/postgres.sh preloads) created in its database.
func openStatements(t *testing.T, url string) statements {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	s := statements{db}
	if _, err := db.Exec("SELECT count(*) FROM pg_stat_statements"); err != nil {
		t.Skipf("pg_stat_statements is not loaded (start the server with shared_preload_libraries=pg_stat_statements, as .ci/postgres.sh does): %v", err)
	}
	return s
}

// snapshot is the calls of every statement of the database so far; this
// connection's own reads are left out.
func (s statements) snapshot(t *testing.T) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := s.db.QueryContext(ctx, `SELECT query, sum(calls)::bigint FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND query NOT LIKE '%pg_stat_statements%' GROUP BY query`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var q string
		var n int
		if err := rows.Scan(&q, &n); err != nil {
			t.Fatal(err)
		}
		out[q] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// since is how many more times each statement ran than in before.
func (s statements) since(t *testing.T, before map[string]int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for q, n := range s.snapshot(t) {
		if d := n - before[q]; d > 0 {
			out[q] = d
		}
	}
	return out
}
