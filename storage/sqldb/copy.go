package sqldb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Copy moves a whole install from a SQLite database to a PostgreSQL one
// (agentd migrate-db): every table of the SQLite schema but the migrations
// bookkeeping, in one PostgreSQL transaction, so a failure or a count that
// does not match leaves the target as it was.
//
// Both must be open through Open (so both are at the newest migration) and
// nothing else may write to either meanwhile: the source is read in one
// snapshot and never written, the target must hold no rows (ErrNotEmpty
// names the first table that does). Rows go in with COPY, parents before
// children. The target's triggers are disabled during the copy and the
// tables they maintain (the agents' call counters, call_hours, auth_epoch)
// are copied as they are: replaying the triggers would count every call
// twice, and a recount would not keep the rows call_hours keeps at zero.
// Identity columns then continue after the highest value the source used,
// and every table's rows are counted on both sides before the commit.
//
// progress, if not nil, is called with a table's running row count every
// 50,000 rows and with its final count when the table is done.
func Copy(ctx context.Context, from, to *DB, progress func(table string, n int64)) (CopyReport, error) {
	start := time.Now()
	var rep CopyReport
	if from.dialect != SQLite || to.dialect != Postgres {
		return rep, errors.New("storage: copy runs from a SQLite database to a PostgreSQL one")
	}
	if progress == nil {
		progress = func(string, int64) {}
	}
	src, err := from.r.BeginTx(ctx, nil) // one snapshot of the source for the whole copy
	if err != nil {
		return rep, fmt.Errorf("storage: copy: read source: %w", err)
	}
	defer src.Rollback()
	plan, err := readSourceSchema(ctx, src)
	if err != nil {
		return rep, err
	}

	conn, err := to.pool.Acquire(ctx)
	if err != nil {
		return rep, fmt.Errorf("storage: copy: connect to target: %w", err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return rep, fmt.Errorf("storage: copy: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The schema lock every agentd process takes to migrate this database:
	// one started by mistake waits for the copy instead of writing into it.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLockKey)); err != nil {
		return rep, fmt.Errorf("storage: copy: lock target: %w", err)
	}
	if err := checkVersions(ctx, tx, plan.version); err != nil {
		return rep, err
	}
	target, err := readTargetSchema(ctx, tx)
	if err != nil {
		return rep, err
	}
	if err := plan.bind(target); err != nil {
		return rep, err
	}
	if err := checkEmpty(ctx, tx, target); err != nil {
		return rep, err
	}
	triggers, err := disableTriggers(ctx, tx, plan.tables)
	if err != nil {
		return rep, err
	}
	// Copied events keep SQLite's order, seq alone: they all get xid 1,
	// below every transaction's, as the webhook cursors copied with them
	// (cursor_xid's default), instead of the copy's own xid, which would
	// put them after every cursor and deliver them again.
	if _, err := tx.Exec(ctx, "ALTER TABLE events ALTER COLUMN xid SET DEFAULT '1'"); err != nil {
		return rep, fmt.Errorf("storage: copy: %w", err)
	}
	for _, t := range plan.tables {
		if seeded[t.name] {
			if _, err := tx.Exec(ctx, "DELETE FROM "+pgIdent(t.name)); err != nil {
				return rep, fmt.Errorf("storage: copy %s: %w", t.name, err)
			}
		}
		n, err := copyRows(ctx, src, tx, t, progress)
		if err != nil {
			return rep, err
		}
		rep.Tables = append(rep.Tables, TableCount{Table: t.name, Source: t.rows, Copied: n})
		rep.Rows += n
		progress(t.name, n)
	}
	if _, err := tx.Exec(ctx, "ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id()"); err != nil {
		return rep, fmt.Errorf("storage: copy: %w", err)
	}
	if err := enableTriggers(ctx, tx, triggers); err != nil {
		return rep, err
	}
	if rep.Sequences, err = resetSequences(ctx, tx, plan); err != nil {
		return rep, err
	}
	if err := verifyCounts(ctx, tx, rep.Tables); err != nil {
		rep.Took = time.Since(start)
		return rep, err
	}
	if err := tx.Commit(ctx); err != nil {
		return rep, fmt.Errorf("storage: copy: commit: %w", err)
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// CopyReport is what Copy did: each table's rows on both sides and the
// identity sequences it moved on.
type CopyReport struct {
	Tables    []TableCount    `json:"tables"`
	Sequences []SequenceReset `json:"sequences"`
	Rows      int64           `json:"rows"` // rows copied in all
	Took      time.Duration   `json:"-"`
}

// TableCount is one table's rows: in the source's snapshot, sent by COPY,
// and counted in the target before the commit. Copy commits only when the
// three agree for every table.
type TableCount struct {
	Table  string `json:"table"`
	Source int64  `json:"source"`
	Copied int64  `json:"copied"`
	Target int64  `json:"target"`
}

// SequenceReset is an identity column's sequence moved past the highest
// value the source used, so the next row inserted gets a new number.
type SequenceReset struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	Value  int64  `json:"value"`
}

// ErrNotEmpty is returned (wrapped, naming the table) when the copy's
// target already holds rows: Copy only fills a fresh database.
var ErrNotEmpty = errors.New("target database is not empty")

// ErrCountMismatch is returned (wrapped, naming the tables) when a table's
// rows in the target do not match the source; nothing is committed.
var ErrCountMismatch = errors.New("row counts differ")

// seeded are the tables a fresh schema already fills (auth_epoch's single
// row comes from its migration): they do not make a target non-empty, and
// the copy replaces their rows with the source's.
var seeded = map[string]bool{"auth_epoch": true}

// skipped are the tables Copy leaves alone: schema_migrations, which the
// target's own migrations wrote. SQLite's internal tables (sqlite_*) are
// never listed; sqlite_sequence is read to set the sequences.
var skipped = map[string]bool{"schema_migrations": true}

// checkEmpty refuses a target that holds rows in any table but the seeded
// and skipped ones.
func checkEmpty(ctx context.Context, tx pgx.Tx, target map[string][]pgColumn) error {
	for _, name := range sortedKeys(target) {
		if seeded[name] || skipped[name] {
			continue
		}
		var n int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+pgIdent(name)).Scan(&n); err != nil {
			return fmt.Errorf("storage: copy: count %s: %w", name, err)
		}
		if n > 0 {
			return fmt.Errorf("%w: table %s has %d row(s); copy into a new, empty database", ErrNotEmpty, name, n)
		}
	}
	return nil
}

// verifyCounts fills each table's Target count and fails when any differs
// from the source or from what COPY sent.
func verifyCounts(ctx context.Context, tx pgx.Tx, tables []TableCount) error {
	var bad []string
	for i := range tables {
		t := &tables[i]
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+pgIdent(t.Table)).Scan(&t.Target); err != nil {
			return fmt.Errorf("storage: copy: count %s: %w", t.Table, err)
		}
		if t.Target != t.Source || t.Copied != t.Source {
			bad = append(bad, fmt.Sprintf("%s (source %d, copied %d, target %d)", t.Table, t.Source, t.Copied, t.Target))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s; nothing was committed", ErrCountMismatch, strings.Join(bad, ", "))
	}
	return nil
}

// resetSequences moves the sequence of every identity column of the copied
// tables past the highest value used: the column's maximum, or for a
// SQLite AUTOINCREMENT table the highest number it ever handed out
// (sqlite_sequence), which is larger when the newest rows were deleted.
// Chunk ids and event sequence numbers are never reused: mirrors and
// webhook cursors rely on it.
func resetSequences(ctx context.Context, tx pgx.Tx, p *copyPlan) ([]SequenceReset, error) {
	var out []SequenceReset
	for _, t := range p.tables {
		var idents []string
		for _, c := range t.target {
			if c.identity {
				idents = append(idents, c.name)
			}
		}
		for _, col := range idents {
			var v int64
			if err := tx.QueryRow(ctx, "SELECT coalesce(max("+pgIdent(col)+"), 0) FROM "+pgIdent(t.name)).Scan(&v); err != nil {
				return nil, fmt.Errorf("storage: copy: max %s.%s: %w", t.name, col, err)
			}
			if len(idents) == 1 {
				v = max(v, p.autoincrement[t.name])
			}
			if v < 1 {
				continue // nothing used yet: the sequence starts at 1 as created
			}
			if _, err := tx.Exec(ctx, "SELECT setval(pg_get_serial_sequence($1, $2), $3)", pgIdent(t.name), col, v); err != nil {
				return nil, fmt.Errorf("storage: copy: sequence of %s.%s: %w", t.name, col, err)
			}
			out = append(out, SequenceReset{Table: t.name, Column: col, Value: v})
		}
	}
	return out, nil
}

// disableTriggers disables the enabled user triggers of the tables (inside
// the transaction, so a rollback enables them again) and returns them by
// table for enableTriggers. ALTER TABLE needs only the tables' owner, the
// user agentd's migrations ran as, where session_replication_role would
// need a superuser.
func disableTriggers(ctx context.Context, tx pgx.Tx, tables []*copyTable) (map[string][]string, error) {
	out := map[string][]string{}
	for _, t := range tables {
		rows, err := tx.Query(ctx, `SELECT tgname FROM pg_trigger
			WHERE tgrelid = $1::regclass AND NOT tgisinternal AND tgenabled <> 'D' ORDER BY tgname`, pgIdent(t.name))
		if err != nil {
			return nil, fmt.Errorf("storage: copy: triggers of %s: %w", t.name, err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("storage: copy: triggers of %s: %w", t.name, err)
		}
		for _, n := range names {
			if _, err := tx.Exec(ctx, "ALTER TABLE "+pgIdent(t.name)+" DISABLE TRIGGER "+pgIdent(n)); err != nil {
				return nil, fmt.Errorf("storage: copy: disable trigger %s: %w", n, err)
			}
		}
		if len(names) > 0 {
			out[t.name] = names
		}
	}
	return out, nil
}

// enableTriggers enables again what disableTriggers disabled.
func enableTriggers(ctx context.Context, tx pgx.Tx, triggers map[string][]string) error {
	for _, table := range sortedKeys(triggers) {
		for _, n := range triggers[table] {
			if _, err := tx.Exec(ctx, "ALTER TABLE "+pgIdent(table)+" ENABLE TRIGGER "+pgIdent(n)); err != nil {
				return fmt.Errorf("storage: copy: enable trigger %s: %w", n, err)
			}
		}
	}
	return nil
}

// pgIdent quotes a table or column name for PostgreSQL.
func pgIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

// PostgresName is where a PostgreSQL URL points, as host:port/database,
// without the user, the password or the parameters: what a command may
// print about a URL that can hold a password.
func PostgresName(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" && u.Path == "" {
		return "(URL not shown)"
	}
	return u.Host + u.Path
}
