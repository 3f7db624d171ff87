package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
)

// sameType maps SQLite's declared column types to the PostgreSQL types
// that store the same values in agentd's schema (times are integer
// milliseconds, flags 0/1 integers, JSON text on both).
var sameType = map[string][]string{
	"text":    {"text"},
	"integer": {"bigint", "integer", "smallint"},
	"bigint":  {"bigint"},
	"real":    {"double precision", "real"},
	"blob":    {"bytea"},
}

// schemaAllowed are the differences between the twins that are meant,
// with the reason; every other one fails TestMigrationTwinsAgree.
var schemaAllowed = map[string]string{
	// SQLite's implicit rowid, written out where a query orders by it
	// (insertion order breaking ties), postgres/0001 and 0002.
	"column agent_jobs.rowid": "rowid",
	"column agents.rowid":     "rowid",
	"column api_keys.rowid":   "rowid",
	"column kb_sources.rowid": "rowid",
	"column orgs.rowid":       "rowid",
	"column users.rowid":      "rowid",
	// The event log's order on PostgreSQL is (xid, seq): writes commit
	// concurrently there (sqldb.Pos, postgres/0025 and 0030).
	"column events.xid":                       "log order",
	"index events.events_org_xid":             "log order",
	"index events.events_xid":                 "log order",
	"column webhook_endpoints.cursor_xid":     "log order",
	"column webhook_endpoints.since_snapshot": "log order",
	"column webhook_endpoints.since_xid":      "log order",
	// The hourly call counts: one PostgreSQL trigger function handles the
	// old and the new row of an update, where SQLite's triggers have one
	// statement each (0013, postgres/0028).
	"trigger call_hours_update_new": "one function on PostgreSQL",
	"trigger call_hours_update_old": "one function on PostgreSQL",
	"trigger call_hours_update":     "one function on PostgreSQL",
	// Wake-ups between processes: LISTEN/NOTIFY exists only on PostgreSQL
	// (postgres/0026, 0029, 0033); SQLite's one writer wakes its own
	// process in Go.
	"trigger analyses_notify_ins":           "NOTIFY",
	"trigger analyses_notify_upd":           "NOTIFY",
	"trigger call_batches_notify":           "NOTIFY",
	"trigger calls_notify_ins":              "NOTIFY",
	"trigger calls_notify_upd":              "NOTIFY",
	"trigger events_notify":                 "NOTIFY",
	"trigger kb_sources_notify_ins":         "NOTIFY",
	"trigger kb_sources_notify_upd":         "NOTIFY",
	"trigger webhook_deliveries_notify_ins": "NOTIFY",
	"trigger webhook_deliveries_notify_upd": "NOTIFY",
	// vector_log's seq is taken at commit on PostgreSQL, so seqs become
	// visible in order (postgres/0028); SQLite commits one at a time.
	"trigger vector_log_commit": "seq at commit",
}

// TestMigrationTwinsAgree migrates a SQLite file and a PostgreSQL database
// with the two migration folders and compares what they made: tables,
// columns (type, nullability, default), indexes (name, columns,
// uniqueness), keys and triggers (name, table). The twins are written by
// hand; this keeps them from drifting apart.
func TestMigrationTwinsAgree(t *testing.T) {
	admin := os.Getenv(dbtest.Env)
	if admin == "" {
		t.Skipf("needs PostgreSQL beside SQLite: set %s (see .ci/postgres.sh); CI sets it", dbtest.Env)
	}
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "twin.db")
	pgURL := dbtest.Path(t, "twin")
	for _, p := range []string{file, pgURL} {
		st, err := storage.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	lite, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	drift := compareSchemas(readSQLite(t, lite), readPostgres(t, pg))
	for _, d := range drift {
		t.Error(d)
	}
	if len(drift) > 0 {
		t.Log("fix the twin (a new migration in both folders), or add the difference to schemaAllowed with its reason")
	}
}

// compareSchemas lists the differences of pg from lite that schemaAllowed
// does not name, and the allowed ones that no longer occur.
func compareSchemas(lite, pg *schema) []string {
	var found []string
	seen := map[string]bool{}
	diff := func(key, msg string) {
		seen[key] = true
		if _, ok := schemaAllowed[key]; !ok {
			found = append(found, key+": "+msg)
		}
	}
	for _, k := range sortedKeys(lite.columns) {
		l := lite.columns[k]
		p, ok := pg.columns[k]
		if !ok {
			diff("column "+k, "only in SQLite")
			continue
		}
		if !typeMatches(l.typ, p.typ) {
			diff("type "+k, fmt.Sprintf("SQLite %q, PostgreSQL %q", l.typ, p.typ))
		}
		if l.notNull != p.notNull {
			diff("null "+k, fmt.Sprintf("NOT NULL on SQLite %v, on PostgreSQL %v", l.notNull, p.notNull))
		}
		if l.def != p.def {
			diff("default "+k, fmt.Sprintf("SQLite %q, PostgreSQL %q", l.def, p.def))
		}
	}
	for _, k := range sortedKeys(pg.columns) {
		if _, ok := lite.columns[k]; !ok {
			diff("column "+k, "only in PostgreSQL")
		}
	}
	compareSets := func(kind string, l, p map[string]string) {
		for _, k := range sortedKeys(l) {
			if pv, ok := p[k]; !ok {
				diff(kind+" "+k, "only in SQLite")
			} else if pv != l[k] {
				diff(kind+" "+k, fmt.Sprintf("SQLite %s, PostgreSQL %s", l[k], pv))
			}
		}
		for _, k := range sortedKeys(p) {
			if _, ok := l[k]; !ok {
				diff(kind+" "+k, "only in PostgreSQL")
			}
		}
	}
	compareSets("index", lite.indexes, pg.indexes)
	compareSets("trigger", lite.triggers, pg.triggers)
	keys := func(m map[string]bool) map[string]string {
		out := map[string]string{}
		for k := range m {
			out[k] = "present"
		}
		return out
	}
	compareSets("key", keys(lite.keys), keys(pg.keys))
	for _, k := range sortedKeys(schemaAllowed) {
		if !seen[k] {
			found = append(found, k+": allowed in schemaAllowed but no longer differs; remove it")
		}
	}
	return found
}

// TestMigrationTwinFiles checks that the two migration folders hold the
// same numbered files: a migration written for one engine only would
// leave the other's schema behind (runs without PostgreSQL).
func TestMigrationTwinFiles(t *testing.T) {
	names := func(dir string) []string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".sql") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	lite, pg := names("migrations"), names(filepath.Join("migrations", "postgres"))
	if strings.Join(lite, "\n") != strings.Join(pg, "\n") {
		t.Errorf("migration twins differ:\nSQLite:     %v\nPostgreSQL: %v", lite, pg)
	}
}

func typeMatches(lite, pg string) bool {
	for _, t := range sameType[strings.Fields(lite + " ?")[0]] {
		if t == pg {
			return true
		}
	}
	return false
}
