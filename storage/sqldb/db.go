// Package sqldb is the connection every store of package storage shares:
// the SQLite file with its writer and reader pools, transactions, prepared
// statement caches, migrations, the auth epoch, the event outbox insert
// that a change writes in its own transaction, and the small SQL helpers
// the stores have in common. It imports no other agentd package.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is the SQLite database: one writer connection (immediate transactions,
// so concurrent read-then-write transactions never fail with "database is
// locked" inside one process) and a pool of read-only connections.
type DB struct {
	path       string
	dialect    Dialect
	pool       *pgxpool.Pool // PostgreSQL only: the connections w and r share
	w          *sql.DB
	r          *sql.DB
	migrations fs.FS

	shm        *shmWatch     // nil: no fast path, query every time
	ckpt       *checkpointer // nil without shm
	epochMu    sync.Mutex
	epochSeen  bool
	epochKey   any // what epochValue was read under: the wal-index header, or the auth channel's version
	epochValue int64

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	wstmts struct { // prepared on the writer, for hot statements inside transactions
		sync.Mutex
		m map[string]*sql.Stmt
	}

	txNotes sync.Map  // *sql.Tx -> *txNote: channels to wake once it commits
	lis     *Listener // wake-ups (listen.go)
}

// Open opens (creating if needed) the database at path and applies every
// pending migration of migrations (files NNNN_name.sql under migrations/
// for SQLite, under migrations/postgres/ for PostgreSQL). path is a SQLite
// file or a postgres:// URL. Several processes may open the same database
// at once (the CLI while the server runs): migrations and writes are
// serialised by SQLite, or by an advisory lock on PostgreSQL (migrations).
func Open(ctx context.Context, path string, migrations fs.FS) (*DB, error) {
	if path == "" {
		return nil, errors.New("storage: empty database path")
	}
	if IsPostgresURL(path) {
		return openPostgres(ctx, path, migrations)
	}
	if err := ownerOnly(path); err != nil {
		return nil, err
	}
	base := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)"
	// The writer keeps up to 64 MiB of pages (SQLite's default is 2 MiB):
	// a 1,000-call batch touches nine index b-trees of a large calls table.
	w, err := sql.Open("sqlite", base+fmt.Sprintf("&_txlock=immediate&_pragma=wal_autocheckpoint(%d)&_pragma=cache_size(-65536)", walAutoCheckpoint))
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, w: w, migrations: migrations, lis: newListener(nil)}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("storage: open readers: %w", err)
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(0)
	db.r = r
	db.shm = openShmWatch(path)
	db.ckpt = startCheckpointer(db)
	return db, nil
}

// Path is the database file the DB was opened on.
func (db *DB) Path() string { return db.path }

// Close closes every connection. On PostgreSQL the prepared statements
// are left to their connections, which close them: closing one waits for
// each writer connection it was prepared on, and a writer waiting for a
// row lock would wait for a transaction that needs the statement, a
// deadlock when Close races with writes.
func (db *DB) Close() error {
	pg := db.dialect == Postgres
	db.stmtMu.Lock()
	for _, st := range db.stmts {
		if !pg {
			st.Close()
		}
	}
	db.stmts = nil
	db.wstmts.Lock()
	for _, st := range db.wstmts.m {
		if !pg {
			st.Close()
		}
	}
	db.wstmts.m = nil
	db.wstmts.Unlock()
	db.stmtMu.Unlock()
	db.ckpt.stop()
	db.lis.close()
	if db.shm != nil {
		db.shm.close() // readers still running see it closed and query
	}
	err := errors.Join(db.r.Close(), db.w.Close())
	if db.pool != nil {
		db.pool.Close()
	}
	return err
}

// Reader is the pool of read-only connections.
func (db *DB) Reader() *sql.DB { return db.r }

// Write runs fn in one write transaction: on SQLite an immediate one on
// the writer connection; on PostgreSQL a SERIALIZABLE one, which fn may
// run in again (see writePG).
func (db *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.dialect == Postgres {
		return db.writePG(ctx, fn)
	}
	return db.writeOnce(ctx, nil, fn)
}

func (db *DB) writeOnce(ctx context.Context, opts *sql.TxOptions, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("storage: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		db.takeNotes(tx)
		return err
	}
	notes := db.takeNotes(tx)
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: commit: %w", err)
	}
	db.lis.committed(notes...)
	db.ckpt.poke()
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check and returns its first line
// ("ok" for a healthy file).
func (db *DB) IntegrityCheck(ctx context.Context) (string, error) {
	if db.dialect == Postgres { // the server checks its own pages
		return "ok", db.r.PingContext(ctx)
	}
	var s string
	err := db.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&s)
	return s, err
}

// AuthEpoch returns a number that changes whenever a user, key or
// organization changes, in this process or another one on the same
// database. Auth runs it on every request, so the value read last is kept
// under a key that changes with any commit that could move it: the
// wal-index header on SQLite, the listener's auth channel version on
// PostgreSQL (while the listener is down there is no key, and every call
// queries).
func (db *DB) AuthEpoch(ctx context.Context) (int64, error) {
	if db.dialect == Postgres {
		ver, live := db.lis.Version(ChanAuth)
		return db.cachedAuthEpoch(ctx, ver, live)
	}
	var hdr [48]byte
	watched := false
	if db.shm != nil {
		hdr, watched = db.shm.header()
	}
	return db.cachedAuthEpoch(ctx, hdr, watched)
}

// cachedAuthEpoch returns the epoch kept under key, or reads it and, when
// the key is valid, keeps it under key. The key is taken before the read:
// a commit in between moves it, so the next call reads again and the value
// is never used stale.
func (db *DB) cachedAuthEpoch(ctx context.Context, key any, valid bool) (int64, error) {
	if valid {
		db.epochMu.Lock()
		v, hit := db.epochValue, db.epochSeen && db.epochKey == key
		db.epochMu.Unlock()
		if hit {
			return v, nil
		}
	}
	var v int64
	if err := db.ReadRow(ctx, "SELECT n FROM auth_epoch WHERE id = 1").Scan(&v); err != nil {
		return 0, fmt.Errorf("storage: auth epoch: %w", err)
	}
	if valid {
		db.epochMu.Lock()
		db.epochSeen, db.epochKey, db.epochValue = true, key, v
		db.epochMu.Unlock()
	}
	return v, nil
}

// Stmt returns a prepared statement on the reader pool, prepared once per
// query text: preparing costs more than running most of our reads.
func (db *DB) Stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	if st, ok := db.stmts[query]; ok {
		return st, nil
	}
	st, err := db.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if db.stmts == nil {
		db.stmts = map[string]*sql.Stmt{}
	}
	db.stmts[query] = st
	return st, nil
}

// WriterStmts prepares hot statements once on the writer connection (call
// it outside a transaction: the writer is the only connection); bind them
// to a transaction with tx.StmtContext. Parsing costs more than running the
// delivery worker's statements.
func (db *DB) WriterStmts(ctx context.Context, queries ...string) ([]*sql.Stmt, error) {
	db.wstmts.Lock()
	defer db.wstmts.Unlock()
	out := make([]*sql.Stmt, len(queries))
	for i, q := range queries {
		st, ok := db.wstmts.m[q]
		if !ok {
			var err error
			if st, err = db.w.PrepareContext(ctx, q); err != nil {
				return nil, err
			}
			if db.wstmts.m == nil {
				db.wstmts.m = map[string]*sql.Stmt{}
			}
			db.wstmts.m[q] = st
		}
		out[i] = st
	}
	return out, nil
}

// ReadRows runs a hot read through the statement cache.
func (db *DB) ReadRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if db.dialect == Postgres { // pgx caches the prepared statement per connection
		return db.r.QueryContext(ctx, query, args...)
	}
	st, err := db.Stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// ReadRow runs a hot single-row read through the statement cache.
func (db *DB) ReadRow(ctx context.Context, query string, args ...any) *sql.Row {
	if db.dialect == Postgres {
		return db.r.QueryRowContext(ctx, query, args...)
	}
	st, err := db.Stmt(ctx, query)
	if err != nil {
		return db.r.QueryRowContext(ctx, query, args...) // carries the same error to Scan
	}
	return st.QueryRowContext(ctx, args...)
}

// ReadRowFresh is ReadRow for the reads every process makes at every
// wake-up (a scheduler's next due call, a worker's look for work): on
// PostgreSQL it is planned at each run, as an unnamed statement, rather
// than through the connection's prepared statement, whose generic plan
// PostgreSQL keeps until the table is next analyzed. A plan made while a
// new install's tables were nearly empty read every row of them once they
// had grown (a sequential scan where the rows wanted are at an index's
// start), at every wake-up of every process, until autovacuum came by.
// Planning these few reads costs tens of microseconds a run.
func (db *DB) ReadRowFresh(ctx context.Context, query string, args ...any) *sql.Row {
	if db.dialect == Postgres {
		return db.r.QueryRowContext(ctx, query, append([]any{pgx.QueryExecModeExec}, args...)...)
	}
	return db.ReadRow(ctx, query, args...)
}

// PoolStats are the connection pool statistics of the writer (one
// connection) and of the reader pool, by name: "writer", "reader".
func (db *DB) PoolStats() map[string]sql.DBStats {
	return map[string]sql.DBStats{"writer": db.w.Stats(), "reader": db.r.Stats()}
}

// WALHeader is the first wal-index header, which SQLite rewrites on every
// commit of any process; ok is false where it cannot be read (then callers
// query instead).
func (db *DB) WALHeader() (h [48]byte, ok bool) {
	if db.shm == nil {
		return h, false
	}
	return db.shm.header()
}
