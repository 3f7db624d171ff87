package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// schemaLockKey is the advisory lock PostgreSQL migrations and the copy
// into a new database take (pg_advisory_xact_lock): two processes starting
// at once would collide in the catalog. Ordinary writes take no lock of
// their own: they run at SERIALIZABLE and are retried (see Write).
const schemaLockKey = 0x61676e7464 // "agntd"
// openPostgres connects to the PostgreSQL database at url through a pgx
// pool and applies the pending migrations of migrations/postgres.
func openPostgres(ctx context.Context, url string, migrations fs.FS) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("storage: %s: %w", redactURL(url), err)
	}
	if !strings.Contains(url, "connect_timeout") {
		// A host that is down or unreachable must fail the request fast
		// (503) rather than hold it for the OS's TCP timeout; with several
		// hosts, each one tried gets this long.
		cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	}
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	const writers = 4
	cfg.MaxConns = int32(readers + writers)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", redactURL(url), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("storage: open %s: %w", redactURL(url), err)
	}
	open := func(n int) *sql.DB {
		d := sql.OpenDB(pgConnector{stdlib.GetPoolConnector(pool)})
		d.SetMaxOpenConns(n)
		d.SetMaxIdleConns(n)
		return d
	}
	db := &DB{path: url, dialect: Postgres, pool: pool, w: open(writers), r: open(readers), migrations: migrations,
		lis: newListener(listenConnect(pool))}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// listenConnect opens the listener's own connection, with the pool's
// settings; application_name tells it apart in pg_stat_activity.
func listenConnect(pool *pgxpool.Pool) func(context.Context) (*pgx.Conn, error) {
	return func(ctx context.Context) (*pgx.Conn, error) {
		cfg := pool.Config().ConnConfig.Copy()
		cfg.RuntimeParams["application_name"] = "agentd-listen"
		return pgx.ConnectConfig(ctx, cfg)
	}
}

// writePG runs fn in a SERIALIZABLE transaction, again from the start
// after a serialization failure or a deadlock (another process's
// transaction won), at most writeAttempts times with a short jittered
// pause: every store's read-then-write stays as correct as under SQLite's
// single writer, without writes of several processes waiting for each
// other. fn must be safe to run again: it resets whatever it captures and
// does nothing outside tx.
func (db *DB) writePG(ctx context.Context, fn func(tx *sql.Tx) error) error {
	pause := time.Millisecond
	for attempt := 1; ; attempt++ {
		err := db.writeOnce(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable}, fn)
		// A unique violation may be a race too: two transactions read the
		// same count and insert the same next number (one writer at a time
		// never did). Run again twice: the next run reads the other's
		// commit; a real duplicate fails the same way and is returned.
		race := pgUnique(err) && attempt <= 2
		if err == nil || !(Retryable(err) || race) || attempt == writeAttempts {
			return err
		}
		t := time.NewTimer(pause/2 + rand.N(pause))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// WriteClaim runs fn like Write, but on PostgreSQL at READ COMMITTED
// (retried only after a deadlock): for the hot claims of work queues,
// which several processes run at once on the same rows, and the writes of
// a claimed item guarded by its claim token. SERIALIZABLE would fail most
// of them (each reads rows another claim just took); instead fn must be
// correct under row locks alone: it picks rows with FOR UPDATE SKIP LOCKED
// or re-checks its conditions in the UPDATE that takes them (PostgreSQL
// re-evaluates them on the row's latest version), and locks whatever else
// it reads-then-writes (a budget row) before reading it.
func (db *DB) WriteClaim(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.dialect != Postgres {
		return db.writeOnce(ctx, nil, fn)
	}
	var err error
	for attempt := 1; attempt <= writeAttempts; attempt++ {
		err = db.writeOnce(ctx, nil, fn)
		race := pgUnique(err) && attempt <= 2 // as in writePG
		if err == nil || !(Retryable(err) || race) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// writeAttempts bounds Write's runs of one fn on PostgreSQL.
const writeAttempts = 12

// Retryable reports whether err is PostgreSQL's serialization_failure or
// deadlock_detected: running the whole transaction again may succeed.
func Retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// pgUnique reports whether err is PostgreSQL's unique_violation.
func pgUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// Unavailable reports whether err says the database cannot be reached or
// does not take work now, as opposed to an error of the statement: a failed
// connection attempt (pgconn.ConnectError), a connection lost mid-query
// (pgconn's connection-level errors, driver.ErrBadConn, a bare unexpected
// EOF from a result being read), or
// the server's own SQLSTATE for it: class 08 (connection exception), 57P01
// admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300
// too_many_connections and 25006 read_only_sql_transaction (a write that
// reached a standby mid-failover). A caller's cancellation or deadline is
// not the database's fault and is left to the caller's own mapping.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "53300", "25006":
			return true
		}
		return strings.HasPrefix(pe.Code, "08")
	}
	// Only pgconn's own wrappers count, not any net.Error: an HTTP client's
	// error that reached the caller unwrapped is not the database's.
	var ce *pgconn.ConnectError
	var connErr interface{ SafeToRetry() bool } // pgconn's errors of the connection, not of the statement
	return errors.As(err, &ce) || errors.As(err, &connErr) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) // pgconn returns a result's read error bare
}

// redactURL is where a database URL points (host, port, database) for
// error messages: a password may sit in the user part or in a parameter.
func redactURL(s string) string { return "PostgreSQL " + PostgresName(s) }
