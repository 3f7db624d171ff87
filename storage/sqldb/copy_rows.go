package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// progressEvery is how many rows of a table pass between progress calls.
const progressEvery = 50_000

// copyRows streams one table from the source snapshot into the target
// with COPY (no batch is held in memory) and returns the rows sent.
func copyRows(ctx context.Context, src *sql.Tx, tx pgx.Tx, t *copyTable, progress func(string, int64)) (int64, error) {
	if len(t.into) == 0 {
		return 0, nil
	}
	rows, err := src.QueryContext(ctx, "SELECT "+strings.Join(t.selects, ", ")+" FROM "+sqliteIdent(t.name))
	if err != nil {
		return 0, fmt.Errorf("storage: copy %s: read: %w", t.name, err)
	}
	defer rows.Close()
	rs := newRowSource(rows, t, progress)
	names := make([]string, len(t.into))
	for i, c := range t.into {
		names[i] = c.name
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, names, rs)
	if rs.err != nil { // the source's or a conversion's error, clearer than COPY's
		return n, rs.err
	}
	if err != nil {
		return n, fmt.Errorf("storage: copy %s: %w", t.name, err)
	}
	return n, nil
}

// rowSource feeds COPY from SQLite rows, converting each value to the
// target column's type.
type rowSource struct {
	rows     *sql.Rows
	t        *copyTable
	conv     []func(any) (any, error)
	vals     []any // scanned
	ptrs     []any
	out      []any // converted
	n        int64
	err      error
	progress func(string, int64)
}

func newRowSource(rows *sql.Rows, t *copyTable, progress func(string, int64)) *rowSource {
	k := len(t.into)
	rs := &rowSource{rows: rows, t: t, conv: make([]func(any) (any, error), k),
		vals: make([]any, k), ptrs: make([]any, k), out: make([]any, k), progress: progress}
	for i, c := range t.into {
		rs.ptrs[i] = &rs.vals[i]
		rs.conv[i] = converter(c.typ)
	}
	return rs
}

// Next reads and converts the next row.
func (s *rowSource) Next() bool {
	if s.err != nil || !s.rows.Next() {
		if s.err == nil {
			if err := s.rows.Err(); err != nil {
				s.err = fmt.Errorf("storage: copy %s: read: %w", s.t.name, err)
			}
		}
		return false
	}
	if err := s.rows.Scan(s.ptrs...); err != nil {
		s.err = fmt.Errorf("storage: copy %s: read: %w", s.t.name, err)
		return false
	}
	for i, v := range s.vals {
		o, err := s.conv[i](v)
		if err != nil {
			s.err = fmt.Errorf("storage: copy %s.%s, row %d: %w", s.t.name, s.t.into[i].name, s.n+1, err)
			return false
		}
		s.out[i] = o
	}
	s.n++
	if s.n%progressEvery == 0 {
		s.progress(s.t.name, s.n)
	}
	return true
}

// Values is the converted row; COPY encodes it before the next Next.
func (s *rowSource) Values() ([]any, error) { return s.out, nil }

// Err is the error that ended the rows, if any.
func (s *rowSource) Err() error { return s.err }

// converter turns what SQLite returns (int64, float64, string, []byte or
// nil) into the Go type PostgreSQL's column takes. Both schemas keep flags
// as 0/1 integers and times as integer milliseconds, so most values pass
// as they are; the conversions cover values SQLite stored with another
// type than the column's (its columns accept any).
func converter(pgType string) func(any) (any, error) {
	switch pgType {
	case "bigint", "integer", "smallint":
		return toInt
	case "double precision", "real", "numeric":
		return toFloat
	case "text", "character varying", "character":
		return toText
	case "bytea":
		return toBytes
	case "boolean":
		return toBool
	}
	return func(v any) (any, error) { return v, nil }
}

func toInt(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), nil
		}
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n, nil
		}
	case []byte:
		return toInt(string(x))
	case bool:
		return toInt(boolInt(x))
	}
	return nil, fmt.Errorf("%v (%T) is not an integer", v, v)
}

func toFloat(v any) (any, error) {
	switch x := v.(type) {
	case nil, float64:
		return x, nil
	case int64:
		return float64(x), nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f, nil
		}
	case []byte:
		return toFloat(string(x))
	}
	return nil, fmt.Errorf("%v (%T) is not a number", v, v)
}

func toText(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return nil, fmt.Errorf("text holds a NUL byte, which PostgreSQL text cannot store")
		}
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("text is not valid UTF-8")
		}
		return x, nil
	case []byte:
		return toText(string(x))
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return nil, fmt.Errorf("%v (%T) is not text", v, v)
}

func toBytes(v any) (any, error) {
	switch x := v.(type) {
	case nil, []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	return nil, fmt.Errorf("%v (%T) is not a blob", v, v)
}

func toBool(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%v (%T) is not a boolean", v, v)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
