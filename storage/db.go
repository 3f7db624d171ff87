// Package storage keeps everything agentd knows in one SQLite file: schema,
// embedded migrations, hand-written queries, and the in-memory mirrors that
// fill storage/search's indexes from it. All SQL of the project lives under
// storage/. This package is the API the rest of agentd sees: DB gathers the
// domain stores (storage/callstore, storage/hookstore, ...) whose methods
// it promotes, and aliases their types, over the connection they share
// (storage/sqldb); knowledge, listings, vectors and the event log are
// written here.
package storage

import (
	"context"
	"database/sql"
	"embed"
	"github.com/agentd/agentd/internal/secretbox"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/dashstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/orgstore"
	"github.com/agentd/agentd/storage/sqldb"
)

//go:embed migrations/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

// Sentinel errors returned (wrapped) by storage methods; app maps them to
// HTTP statuses once.
var (
	ErrNotFound = sqldb.ErrNotFound
	ErrConflict = sqldb.ErrConflict
)

// DB is the SQLite database: one writer connection (immediate transactions,
// so concurrent read-then-write transactions never fail with "database is
// locked" inside one process) and a pool of read-only connections, shared
// by the domain stores embedded here.
type DB struct {
	*callstore.Calls
	*agentstore.Agents
	*orgstore.Orgs
	*hookstore.Webhooks
	*dashstore.Dashboard

	// Conversations is the conversations store, a named field (not
	// embedded): the target shape of a struct of named stores.
	Conversations *convstore.Store
	// Analyses is post-call analysis (plans, queue and results).
	Analyses *analysisstore.Store

	c *sqldb.DB
	r *sql.DB // c's readers, for the queries of this package

	views       atomic.Pointer[EventViews] // how events render their data (storage/events.go)
	listingText *TextIndex                 // keyword index of listings, loaded per organization on first search
}

// Open opens (creating if needed) the database at path and applies every
// pending migration. Several processes may open the same file at once (the
// CLI while the server runs): migrations and writes are serialised by SQLite.
func Open(ctx context.Context, path string) (*DB, error) {
	c, err := sqldb.Open(ctx, path, migrationFS)
	if err != nil {
		return nil, err
	}
	db := &DB{c: c, r: c.Reader(), Agents: agentstore.New(c),
		Orgs: orgstore.New(c), Webhooks: hookstore.New(c), Dashboard: dashstore.New(c),
		Conversations: convstore.New(c), Analyses: analysisstore.New(c)}
	// Secrets at rest: the key is kept outside the database (secretbox).
	box, err := secretbox.Load(path, c.Postgres())
	if err != nil {
		c.Close()
		return nil, err
	}
	if box != nil {
		db.Webhooks.UseSealer(box)
	}
	db.Calls = callstore.New(c, func() callstore.Views {
		v := db.eventViews()
		return callstore.Views{Call: v.Call, Batch: v.Batch}
	})
	db.listingText = newTextIndex(db, loadListingText)
	return db, nil
}

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(s string) bool { return sqldb.IsPostgresURL(s) }

// Postgres reports whether the DB runs on PostgreSQL.
func (db *DB) Postgres() bool { return db.c.Postgres() }

// Path is the database file (or PostgreSQL URL) the DB was opened on.
func (db *DB) Path() string { return db.c.Path() }

// Close closes every connection.
func (db *DB) Close() error { return db.c.Close() }

// IntegrityCheck runs PRAGMA integrity_check and returns its first line
// ("ok" for a healthy file).
func (db *DB) IntegrityCheck(ctx context.Context) (string, error) { return db.c.IntegrityCheck(ctx) }

// AuthEpoch returns a number that changes whenever a user, key or
// organization changes, in this process or another one on the same file.
func (db *DB) AuthEpoch(ctx context.Context) (int64, error) { return db.c.AuthEpoch(ctx) }

// PoolStats are the connection pool statistics of the writer (one
// connection) and of the reader pool, by name: "writer", "reader".
func (db *DB) PoolStats() map[string]sql.DBStats { return db.c.PoolStats() }

// ErrInUse is returned by Restore when another connection has the target
// database open.
var ErrInUse = sqldb.ErrInUse

// FileState is what agentd doctor reads from a database file without
// changing it.
type FileState = sqldb.FileState

// Backup writes a consistent, checked copy of the database at src to dst
// (which must not exist), also while a server writes to src.
func Backup(ctx context.Context, src, dst string) error { return sqldb.Backup(ctx, src, dst) }

// CheckFile runs the integrity check on the database file at path, read only.
func CheckFile(ctx context.Context, path string) error { return sqldb.CheckFile(ctx, path) }

// Restore replaces the database at dst with the backup at src; ErrInUse
// when another connection has dst open.
func Restore(ctx context.Context, src, dst string) error { return sqldb.Restore(ctx, src, dst) }

// InspectFile reads the FileState of the database at path, creating
// nothing and applying no migration.
func InspectFile(ctx context.Context, path string) (FileState, error) {
	return sqldb.InspectFile(ctx, path, migrationFS)
}

// The unexported names below keep this package's own queries (knowledge,
// vectors, listings, events) reading as before the stores moved out.

func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error { return db.c.Write(ctx, fn) }

func (db *DB) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	return db.c.ReadRow(ctx, query, args...)
}

func (db *DB) readRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return db.c.ReadRows(ctx, query, args...)
}

func (db *DB) writerStmts(ctx context.Context, queries ...string) ([]*sql.Stmt, error) {
	return db.c.WriterStmts(ctx, queries...)
}

func ms(t time.Time) int64                  { return sqldb.MS(t) }
func fromMS(v int64) time.Time              { return sqldb.FromMS(v) }
func optMS(v sql.NullInt64) *time.Time      { return sqldb.OptMS(v) }
func nullMS(t *time.Time) any               { return sqldb.NullMS(t) }
func nullStr(s string) any                  { return sqldb.NullStr(s) }
func isUnique(err error) bool               { return sqldb.IsUnique(err) }
func likeEscape(s string) string            { return sqldb.LikeEscape(s) }
func placeholders(row string, n int) string { return sqldb.Placeholders(row, n) }
func nonNil[T any](s []T) []T               { return sqldb.NonNil(s) }

type scanner = sqldb.Scanner

// Rows per multi-row statement: at 14 arguments a row, 500 rows stay far
// below both engines' limits on bound parameters.
const rowsPerStatement = 500

// execRows runs head + n rows + tail for the flat args of n rows of width
// arguments, rowsPerStatement rows per statement.
func execRows(ctx context.Context, tx *sql.Tx, head, row, tail string, width int, args []any) error {
	for len(args) > 0 {
		part := args[:min(len(args), width*rowsPerStatement)]
		args = args[len(part):]
		if _, err := tx.ExecContext(ctx, head+placeholders(row, len(part)/width)+tail, part...); err != nil {
			return err
		}
	}
	return nil
}
