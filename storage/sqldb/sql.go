package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors returned (wrapped) by storage methods; app maps them to
// HTTP statuses once. Package storage re-exports them.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Scanner is a row or rows: what the stores' scan functions read from.
type Scanner interface{ Scan(dest ...any) error }

// IsUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func IsUnique(err error) bool {
	if pgUnique(err) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// MS converts a time to the stored form: integer milliseconds since the epoch (UTC).
func MS(t time.Time) int64 { return t.UnixMilli() }

// FromMS converts a stored millisecond value back to a UTC time.
func FromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// NullMS stores an optional time as NULL when nil.
func NullMS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

// OptMS reads an optional stored time.
func OptMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := FromMS(v.Int64)
	return &t
}

// NullStr stores an empty string as NULL.
func NullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// NullJSON stores an empty raw value as NULL.
func NullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// Placeholders repeats one row of placeholders n times, comma-separated.
func Placeholders(row string, n int) string {
	if n <= 0 {
		return ""
	}
	return row + strings.Repeat(", "+row, n-1)
}

// LikeEscape escapes % and _ for a LIKE pattern used with ESCAPE '\'.
func LikeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// NonNil returns s, or an empty slice for nil (JSON [] rather than null).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// RowsPerStatement is the rows per multi-row statement: at 14 arguments a
// row, 500 rows stay far below both engines' limits on bound parameters.
const RowsPerStatement = 500

// ExecRows runs head + n rows + tail for the flat args of n rows of width
// arguments, RowsPerStatement rows per statement.
func ExecRows(ctx context.Context, tx *sql.Tx, head, row, tail string, width int, args []any) error {
	for len(args) > 0 {
		part := args[:min(len(args), width*RowsPerStatement)]
		args = args[len(part):]
		if _, err := tx.ExecContext(ctx, head+Placeholders(row, len(part)/width)+tail, part...); err != nil {
			return err
		}
	}
	return nil
}

// CountBy runs query, which reads (key, count) rows, on a reader: the
// metrics collectors' backlog counts.
func (db *DB) CountBy(ctx context.Context, query string) (map[string]int, error) {
	rows, err := db.r.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("storage: metrics: %w", err)
	}
	out := map[string]int{}
	if err := Each(rows, func(sc Scanner) error {
		var k string
		var n int
		err := sc.Scan(&k, &n)
		out[k] = n
		return err
	}); err != nil {
		return nil, fmt.Errorf("storage: metrics: %w", err)
	}
	return out, nil
}
