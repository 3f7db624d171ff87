package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Dialect is the SQL engine under a DB. The stores write one query text
// for both (? placeholders are renumbered for PostgreSQL; both take upserts
// and RETURNING) and ask the dialect for the pieces that differ, never
// branching on the engine; a statement or flow that differs as a whole is
// named once per engine in a PerDialect.
type Dialect int

const (
	SQLite Dialect = iota
	Postgres
)

// Dialect is the engine this DB runs on.
func (db *DB) Dialect() Dialect { return db.dialect }

// Postgres reports whether this DB is PostgreSQL, for the composition
// root's choices; stores ask the Dialect instead.
func (db *DB) Postgres() bool { return db.dialect == Postgres }

// PerDialect is a value written once per engine.
type PerDialect[T any] struct{ SQLite, Postgres T }

// For is the value for d.
func (p PerDialect[T]) For(d Dialect) T {
	if d == Postgres {
		return p.Postgres
	}
	return p.SQLite
}

// ForUpdate ends a SELECT in a read-modify-write transaction: on
// PostgreSQL the rows are locked until it ends (other writers run at the
// same time); on SQLite the one writer already excludes them.
func (d Dialect) ForUpdate() string { return PerDialect[string]{Postgres: " FOR UPDATE"}.For(d) }

// SkipLocked ends a SELECT that picks rows to work on: on PostgreSQL the
// rows another transaction holds are skipped, not waited for.
func (d Dialect) SkipLocked() string {
	return PerDialect[string]{Postgres: " FOR UPDATE SKIP LOCKED"}.For(d)
}

// LockKey takes a transaction-level lock of key (held to the end of tx)
// on PostgreSQL, so writers of the same key run one after the other
// there; SQLite's one writer already does, and nothing is taken.
func (d Dialect) LockKey(ctx context.Context, tx *sql.Tx, key string) error {
	if d != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", key)
	return err
}

// TryLock tries the transaction-level lock number key without waiting;
// mine is false when another transaction holds it. Always mine on SQLite.
func (d Dialect) TryLock(ctx context.Context, tx *sql.Tx, key int64) (mine bool, err error) {
	if d != Postgres {
		return true, nil
	}
	err = tx.QueryRowContext(ctx, "SELECT pg_try_advisory_xact_lock(?)", key).Scan(&mine)
	return mine, err
}

// UUID is an SQL expression of a new random UUID v4 as text, for rows
// made by one INSERT ... SELECT.
func (d Dialect) UUID() string {
	if d == Postgres {
		return "gen_random_uuid()::text"
	}
	return `lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||
	substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) ||
	substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))`
}

// GroupConcat aggregates expr's values as text joined by commas.
func (d Dialect) GroupConcat(expr string) string {
	return PerDialect[string]{SQLite: "group_concat(" + expr + ")", Postgres: "string_agg(" + expr + "::text, ',')"}.For(d)
}

// OrderedJoin is an inner join whose left side drives: SQLite's CROSS
// JOIN fixes the order; PostgreSQL has no CROSS JOIN ... ON, and its
// planner picks the order itself.
func (d Dialect) OrderedJoin() string {
	return PerDialect[string]{SQLite: "CROSS JOIN", Postgres: "JOIN"}.For(d)
}

// Param is a placeholder of SQL type typ, where the engine cannot infer
// it (PostgreSQL in a VALUES list); SQLite's columns take any value.
func (d Dialect) Param(typ string) string {
	return PerDialect[string]{SQLite: "?", Postgres: "?::" + typ}.For(d)
}

// InsertedID ends an INSERT of one row whose id the caller reads: on
// PostgreSQL, which has no LastInsertId, the statement returns it
// (QueryRow ... Scan); on SQLite nothing is added and the caller reads
// Result.LastInsertId, which costs no result row.
func (d Dialect) InsertedID() string { return PerDialect[string]{Postgres: " RETURNING id"}.For(d) }

// ReserveIDs returns n new ascending ids of table's key id for rows tx
// writes later: after the highest ever given (SQLite's one writer), or
// drawn from the serial's sequence (PostgreSQL).
func (d Dialect) ReserveIDs(ctx context.Context, tx *sql.Tx, table string, n int) ([]int64, error) {
	ids := make([]int64, 0, n)
	if n == 0 {
		return ids, nil
	}
	if d != Postgres {
		var last int64
		if err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = '%s'), 0),
			coalesce((SELECT max(id) FROM %s), 0))`, table, table)).Scan(&last); err != nil {
			return nil, err
		}
		for i := range n {
			ids = append(ids, last+1+int64(i))
		}
		return ids, nil
	}
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(`SELECT nextval(pg_get_serial_sequence('%s', 'id')) FROM generate_series(1, ?) ORDER BY 1`, table), n)
	if err != nil {
		return nil, err
	}
	return Collect(rows, ScanOne[int64])
}

// JSONFieldIs is a condition that the JSON object in column col has key
// equal to v (a string or a number), with its args. PostgreSQL compares as
// SQLite's json_extract does: a string equals only a JSON string, a number
// a JSON number or a boolean (true is 1, false 0).
func (d Dialect) JSONFieldIs(col, key string, v any) (string, []any) {
	if d != Postgres {
		return "json_extract(" + col + ", ?) = ?", []any{`$."` + strings.ReplaceAll(key, `"`, `""`) + `"`, v}
	}
	if str, ok := v.(string); ok {
		return col + "::jsonb -> ?::text = to_jsonb(?::text)", []any{key, str}
	}
	return `(CASE jsonb_typeof(` + col + `::jsonb -> ?::text)
			WHEN 'number' THEN (` + col + `::jsonb ->> ?::text)::float8
			WHEN 'boolean' THEN ((` + col + `::jsonb ->> ?::text)::boolean)::int END) = ?::float8`, []any{key, key, key, v}
}
