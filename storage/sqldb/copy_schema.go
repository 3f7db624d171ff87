package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5"
)

// copyPlan is what Copy reads of both schemas: the source's tables in an
// order where every table comes after those it references, and what each
// maps to in the target.
type copyPlan struct {
	version       int64 // the source's newest migration
	tables        []*copyTable
	autoincrement map[string]int64 // sqlite_sequence: table -> highest id ever used
}

// copyTable is one table to copy.
type copyTable struct {
	name   string
	cols   []string // the source's columns, in its order
	rowid  bool     // a rowid table (not WITHOUT ROWID): rowid is readable
	refs   []string // tables its foreign keys reference
	rows   int64    // rows in the source's snapshot
	target []pgColumn

	// From bind: what to read from the source (a column name or rowid)
	// and the target column each one fills.
	selects []string
	into    []pgColumn
}

// pgColumn is a column of the target's schema.
type pgColumn struct {
	name     string
	typ      string // information_schema data_type: bigint, text, bytea ...
	identity bool   // an identity (or serial) column with its own sequence
}

// readSourceSchema lists the source's tables, their columns, foreign keys
// and row counts in the snapshot of tx. SQLite's own tables (sqlite_*),
// virtual tables and their shadow tables are left out, as is
// schema_migrations: the target's migrations wrote its own.
func readSourceSchema(ctx context.Context, tx *sql.Tx) (*copyPlan, error) {
	p := &copyPlan{autoincrement: map[string]int64{}}
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&p.version); err != nil {
		return nil, fmt.Errorf("storage: copy: source migrations: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT m.name, l.wr FROM sqlite_master m
		JOIN pragma_table_list l ON l.schema = 'main' AND l.name = m.name
		WHERE m.type = 'table' AND l.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
		ORDER BY m.rowid`)
	if err != nil {
		return nil, fmt.Errorf("storage: copy: source tables: %w", err)
	}
	var tables []*copyTable
	if err := Each(rows, func(sc Scanner) error {
		var t copyTable
		var withoutRowid bool
		err := sc.Scan(&t.name, &withoutRowid)
		t.rowid = !withoutRowid
		if err == nil && !skipped[t.name] {
			tables = append(tables, &t)
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("storage: copy: source tables: %w", err)
	}
	for _, t := range tables {
		if t.cols, err = queryStrings(ctx, tx, "SELECT name FROM pragma_table_info(?) ORDER BY cid", t.name); err != nil {
			return nil, fmt.Errorf("storage: copy: columns of %s: %w", t.name, err)
		}
		if t.refs, err = queryStrings(ctx, tx, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, t.name); err != nil {
			return nil, fmt.Errorf("storage: copy: foreign keys of %s: %w", t.name, err)
		}
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+sqliteIdent(t.name)).Scan(&t.rows); err != nil {
			return nil, fmt.Errorf("storage: copy: count %s: %w", t.name, err)
		}
	}
	if p.tables, err = parentsFirst(tables); err != nil {
		return nil, err
	}
	var hasSeq int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'").Scan(&hasSeq); err != nil {
		return nil, err
	}
	if hasSeq > 0 {
		rows, err := tx.QueryContext(ctx, "SELECT name, seq FROM sqlite_sequence")
		if err != nil {
			return nil, fmt.Errorf("storage: copy: sqlite_sequence: %w", err)
		}
		if err := Each(rows, func(sc Scanner) error {
			var name string
			var seq int64
			err := sc.Scan(&name, &seq)
			p.autoincrement[name] = seq
			return err
		}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// parentsFirst orders tables so each comes after every table it
// references (self references aside), keeping the creation order
// otherwise; the foreign keys hold while the rows go in.
func parentsFirst(tables []*copyTable) ([]*copyTable, error) {
	known := map[string]bool{}
	for _, t := range tables {
		known[t.name] = true
	}
	done := map[string]bool{}
	var out []*copyTable
	for len(out) < len(tables) {
		progressed := false
		for _, t := range tables {
			if done[t.name] {
				continue
			}
			ready := true
			for _, r := range t.refs {
				if r != t.name && known[r] && !done[r] {
					ready = false
				}
			}
			if ready {
				done[t.name] = true
				out = append(out, t)
				progressed = true
			}
		}
		if !progressed {
			return nil, errors.New("storage: copy: the source's foreign keys form a cycle")
		}
	}
	return out, nil
}

// readTargetSchema reads the columns of every table of the target's
// schema (the one its search path writes to), by table.
func readTargetSchema(ctx context.Context, tx pgx.Tx) (map[string][]pgColumn, error) {
	rows, err := tx.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type,
			c.is_identity = 'YES' OR coalesce(c.column_default, '') LIKE 'nextval(%'
		FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("storage: copy: target columns: %w", err)
	}
	defer rows.Close()
	out := map[string][]pgColumn{}
	for rows.Next() {
		var table string
		var c pgColumn
		if err := rows.Scan(&table, &c.name, &c.typ, &c.identity); err != nil {
			return nil, err
		}
		out[table] = append(out[table], c)
	}
	return out, rows.Err()
}

// bind checks that every source table and column has its twin in the
// target and decides what each target
// column is filled from: the source column of the same name, or, for the
// rowid column PostgreSQL tables carry where the stores order by SQLite's
// rowid, the source's rowid. Other target columns keep their defaults.
func (p *copyPlan) bind(target map[string][]pgColumn) error {
	for _, t := range p.tables {
		cols, ok := target[t.name]
		if !ok {
			return fmt.Errorf("storage: copy: table %s of the source has no twin in the target's schema", t.name)
		}
		t.target = cols
		have := map[string]bool{}
		for _, c := range cols {
			have[c.name] = true
		}
		for _, c := range t.cols {
			if !have[c] {
				return fmt.Errorf("storage: copy: column %s.%s of the source has no twin in the target's schema", t.name, c)
			}
		}
		t.selects, t.into = nil, nil
		for _, c := range cols {
			switch {
			case slices.Contains(t.cols, c.name):
				t.selects = append(t.selects, sqliteIdent(c.name))
			case c.name == "rowid" && t.rowid:
				t.selects = append(t.selects, "rowid")
			default:
				continue
			}
			t.into = append(t.into, c)
		}
	}
	return nil
}

// checkVersions refuses a target whose newest migration is not the
// source's: the two schemas would differ.
func checkVersions(ctx context.Context, tx pgx.Tx, source int64) error {
	var v int64
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return fmt.Errorf("storage: copy: target migrations: %w", err)
	}
	if v != source {
		return fmt.Errorf("storage: copy: the source is at migration %d and the target at %d: open both with the same agentd", source, v)
	}
	return nil
}

// queryStrings reads one text column.
func queryStrings(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return Collect(rows, ScanOne[string])
}

// sqliteIdent quotes a table or column name for SQLite.
func sqliteIdent(name string) string { return pgIdent(name) } // the same double-quote rule

// sortedKeys are m's keys in order, for a deterministic walk.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
