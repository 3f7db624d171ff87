package storage_test

import (
	"database/sql"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// schema is what the comparison reads of one migrated database, each part
// keyed so that the two engines' readings compare as maps.
type schema struct {
	columns  map[string]column // "table.column"
	indexes  map[string]string // "table.name" -> "unique(a,b)" / "(a,b)": CREATE INDEX ones, by name
	keys     map[string]bool   // "table primary(a)" / "table unique(a,b)": constraints, whose index names differ
	triggers map[string]string // name -> table
}

type column struct {
	typ     string // the engine's declared type, lower case
	notNull bool
	def     string // normalised default; "" none
}

func newSchema() *schema {
	return &schema{columns: map[string]column{}, indexes: map[string]string{}, keys: map[string]bool{}, triggers: map[string]string{}}
}

func query(t *testing.T, db *sql.DB, q string, args []any, scan func(sc interface{ Scan(...any) error }) error) {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func readSQLite(t *testing.T, db *sql.DB) *schema {
	s := newSchema()
	var tables []string
	query(t, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`, nil,
		func(sc interface{ Scan(...any) error }) error {
			var n string
			err := sc.Scan(&n)
			tables = append(tables, n)
			return err
		})
	for _, tb := range tables {
		var pk []string
		query(t, db, `SELECT name, type, "notnull", coalesce(dflt_value, ''), pk FROM pragma_table_info(?) ORDER BY pk`, []any{tb},
			func(sc interface{ Scan(...any) error }) error {
				var name, typ, def string
				var notNull bool
				var inPK int
				if err := sc.Scan(&name, &typ, &notNull, &def, &inPK); err != nil {
					return err
				}
				if inPK > 0 {
					pk = append(pk, name)
					notNull = true // PostgreSQL makes key columns NOT NULL; SQLite's keep a NULL out in practice
				}
				s.columns[tb+"."+name] = column{typ: strings.ToLower(typ), notNull: notNull, def: normDefault(def)}
				return nil
			})
		if len(pk) > 0 {
			s.keys[tb+" primary("+strings.Join(pk, ",")+")"] = true
		}
		type idx struct {
			name            string
			unique, partial bool
			origin          string
		}
		var idxs []idx
		query(t, db, `SELECT name, "unique", partial, origin FROM pragma_index_list(?)`, []any{tb},
			func(sc interface{ Scan(...any) error }) error {
				var x idx
				err := sc.Scan(&x.name, &x.unique, &x.partial, &x.origin)
				idxs = append(idxs, x)
				return err
			})
		for _, x := range idxs {
			var cols []string
			query(t, db, `SELECT coalesce(name, '<expr>') FROM pragma_index_info(?) ORDER BY seqno`, []any{x.name},
				func(sc interface{ Scan(...any) error }) error {
					var c string
					err := sc.Scan(&c)
					cols = append(cols, c)
					return err
				})
			switch x.origin {
			case "pk":
				s.keys[tb+" primary("+strings.Join(cols, ",")+")"] = true
			case "u":
				s.keys[tb+" unique("+strings.Join(cols, ",")+")"] = true
			default:
				s.indexes[tb+"."+x.name] = indexShape(x.unique, x.partial, cols)
			}
		}
	}
	query(t, db, `SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'`, nil,
		func(sc interface{ Scan(...any) error }) error {
			var n, tb string
			err := sc.Scan(&n, &tb)
			s.triggers[n] = tb
			return err
		})
	return s
}

func readPostgres(t *testing.T, db *sql.DB) *schema {
	s := newSchema()
	query(t, db, `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO', coalesce(c.column_default, '')
		FROM information_schema.columns c JOIN information_schema.tables tb
			ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name AND tb.table_type = 'BASE TABLE'
		WHERE c.table_schema = current_schema()`, nil,
		func(sc interface{ Scan(...any) error }) error {
			var tb, name, typ, def string
			var notNull bool
			if err := sc.Scan(&tb, &name, &typ, &notNull, &def); err != nil {
				return err
			}
			s.columns[tb+"."+name] = column{typ: typ, notNull: notNull, def: normDefault(def)}
			return nil
		})
	// Indexes with their columns in order; those behind a PRIMARY KEY or
	// UNIQUE constraint are keys (their names are the engine's own).
	query(t, db, `SELECT t.relname, i.relname, x.indisunique, x.indpred IS NOT NULL, coalesce(con.contype, ''),
			array_to_string(array(SELECT coalesce(a.attname, '<expr>') FROM unnest(x.indkey) WITH ORDINALITY k(n, o)
				LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n ORDER BY k.o), ',')
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.contype IN ('p', 'u')
		WHERE n.nspname = current_schema()`, nil,
		func(sc interface{ Scan(...any) error }) error {
			var tb, name, kind, cols string
			var unique, partial bool
			if err := sc.Scan(&tb, &name, &unique, &partial, &kind, &cols); err != nil {
				return err
			}
			switch kind {
			case "p":
				s.keys[tb+" primary("+cols+")"] = true
			case "u":
				s.keys[tb+" unique("+cols+")"] = true
			default:
				s.indexes[tb+"."+name] = indexShape(unique, partial, strings.Split(cols, ","))
			}
			return nil
		})
	query(t, db, `SELECT DISTINCT trigger_name, event_object_table FROM information_schema.triggers
		WHERE trigger_schema = current_schema()`, nil,
		func(sc interface{ Scan(...any) error }) error {
			var n, tb string
			err := sc.Scan(&n, &tb)
			s.triggers[n] = tb
			return err
		})
	return s
}

func indexShape(unique, partial bool, cols []string) string {
	k := "(" + strings.Join(cols, ",") + ")"
	if partial {
		k += " WHERE ..."
	}
	if unique {
		return "unique" + k
	}
	return k
}

var (
	castRE   = regexp.MustCompile(`::[a-z ]+(\[\])?`)
	parensRE = regexp.MustCompile(`^\((.*)\)$`)
)

// normDefault makes a default comparable: PostgreSQL's casts and either
// engine's outer parentheses go; a sequence (a serial key) is none.
func normDefault(d string) string {
	d = strings.TrimSpace(castRE.ReplaceAllString(d, ""))
	for {
		m := parensRE.FindStringSubmatch(d)
		if m == nil {
			break
		}
		d = strings.TrimSpace(m[1])
	}
	if strings.HasPrefix(d, "nextval(") || strings.EqualFold(d, "null") {
		return ""
	}
	return strings.ToLower(d)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
