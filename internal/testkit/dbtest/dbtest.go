// Package dbtest picks the database a test runs on, so one set of storage
// and HTTP tests covers both backends: a fresh SQLite file by default, or,
// when AGENTD_TEST_POSTGRES names a PostgreSQL server (a URL such as
// postgres://agentd@127.0.0.1:5432/postgres?sslmode=disable, see
// .ci/postgres.sh), a fresh database created on that server for the test
// and dropped after it.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for Open
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", for Open
)

// Env is the variable that switches the tests to PostgreSQL.
const Env = "AGENTD_TEST_POSTGRES"

// Postgres reports whether the tests run on PostgreSQL.
func Postgres() bool { return os.Getenv(Env) != "" }

// SkipOnPostgres skips a test of something only SQLite has (the file, its
// WAL, backup and restore of the file), saying why.
func SkipOnPostgres(t testing.TB, why string) {
	t.Helper()
	if Postgres() {
		t.Skip("SQLite only: " + why)
	}
}

// SkipOnSQLite skips a test of something only PostgreSQL has (several
// writers committing out of seq order, LISTEN/NOTIFY, its query plans),
// saying why.
func SkipOnSQLite(t testing.TB, why string) {
	t.Helper()
	if !Postgres() {
		t.Skip("PostgreSQL only: " + why)
	}
}

// Path returns a --db value for a new, empty database of the backend
// under test: a SQLite file named name in a temporary directory, or a new
// PostgreSQL database dropped when the test ends (after the cleanups
// registered later, such as closing the DB, have run).
func Path(t testing.TB, name string) string {
	t.Helper()
	admin := os.Getenv(Env)
	if admin == "" {
		return filepath.Join(t.TempDir(), name)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	var b [6]byte
	rand.Read(b[:])
	db := "agentd_test_" + hex.EncodeToString(b[:])
	exec(t, admin, `CREATE DATABASE "`+db+`"`)
	t.Cleanup(func() { exec(t, admin, `DROP DATABASE IF EXISTS "`+db+`" WITH (FORCE)`) })
	u.Path = "/" + db
	return u.String()
}

var (
	inDirMu sync.Mutex
	inDir   = map[string]string{} // dir + "\x00" + name -> database URL
)

// InDir returns the --db value of the database named name in dir, for
// tests that run agentd on a working directory (and restart it there): the
// file dir/name on SQLite; on PostgreSQL a fresh database (see Path), the
// same one for every call with the same dir and name while the test runs.
func InDir(t testing.TB, dir, name string) string {
	t.Helper()
	if !Postgres() {
		return filepath.Join(dir, name)
	}
	inDirMu.Lock()
	defer inDirMu.Unlock()
	k := dir + "\x00" + name
	if db, ok := inDir[k]; ok {
		return db
	}
	db := Path(t, name)
	inDir[k] = db
	t.Cleanup(func() {
		inDirMu.Lock()
		delete(inDir, k)
		inDirMu.Unlock()
	})
	return db
}

// Open opens the database db (a Path or InDir value) with database/sql
// for a test's own queries: read only on SQLite, through pgx on
// PostgreSQL. Write placeholders as $1, $2, ...: both engines read them.
// The caller closes it.
func Open(t testing.TB, db string) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)"
	if Postgres() {
		driver, dsn = "pgx", db
	}
	d, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Exists reports whether agentd has created the database db (a Path or
// InDir value): on SQLite whether the file exists; on PostgreSQL, where the
// test's database exists from the start, whether it holds any table.
func Exists(t testing.TB, db string) bool {
	t.Helper()
	if !Postgres() {
		_, err := os.Stat(db)
		return err == nil
	}
	d := Open(t, db)
	defer d.Close()
	var n int
	q := "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
	if err := d.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n > 0
}

func exec(t testing.TB, admin, stmt string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
