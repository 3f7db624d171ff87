package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

var rowsSchema = fstest.MapFS{
	"migrations/0001_t.sql": {Data: []byte(`CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT, meta TEXT);
		INSERT INTO t (v, meta) VALUES ('a', '{"n": 1, "s": "x", "b": true}'), ('b', '{"n": 2, "s": "1"}'), ('c', '{}');`)},
	"migrations/postgres/0001_t.sql": {Data: []byte(`CREATE TABLE t (id BIGSERIAL PRIMARY KEY, v TEXT, meta TEXT);
		INSERT INTO t (v, meta) VALUES ('a', '{"n": 1, "s": "x", "b": true}'), ('b', '{"n": 2, "s": "1"}'), ('c', '{}');`)},
}

func openRowsDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), dbtest.Path(t, "rows.db"), rowsSchema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Collect reads every row in order and closes the rows; a scan error
// stops it and is returned; no rows is an empty slice, not nil.
func TestCollectAndEach(t *testing.T) {
	ctx := context.Background()
	db := openRowsDB(t)
	query := func(q string, args ...any) *sql.Rows {
		rows, err := db.Reader().QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	rows := query("SELECT v FROM t ORDER BY id")
	got, err := Collect(rows, ScanOne[string])
	if err != nil || len(got) != 3 || got[0] != "a" || got[2] != "c" {
		t.Fatalf("Collect %v %v", got, err)
	}
	if rows.Next() {
		t.Fatal("rows left open")
	}
	none, err := Collect(query("SELECT v FROM t WHERE v = 'z'"), ScanOne[string])
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("no rows: %#v %v", none, err)
	}
	boom := errors.New("boom")
	n := 0
	err = Each(query("SELECT v FROM t ORDER BY id"), func(sc Scanner) error {
		if n++; n == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || n != 2 {
		t.Fatalf("Each stopped after %d rows with %v", n, err)
	}
	if _, err := Collect(query("SELECT v, v FROM t"), ScanOne[string]); err == nil {
		t.Fatal("a scan error was lost")
	}
}

// The dialect's pieces run on their engine: JSON fields compare as
// SQLite's json_extract does, ids are reserved ascending after the highest
// given, locks are taken (or nothing on SQLite), a UUID is made.
func TestDialectPieces(t *testing.T) {
	ctx := context.Background()
	db := openRowsDB(t)
	d := db.Dialect()
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"n", 1, "a"}, {"n", 2, "b"}, {"s", "x", "a"}, {"s", "1", "b"}, {"s", 1, ""}, {"b", 1, "a"},
	} {
		cond, args := d.JSONFieldIs("meta", c.key, c.v)
		var got []string
		rows, err := db.Reader().QueryContext(ctx, "SELECT v FROM t WHERE "+cond+" ORDER BY id", args...)
		if err == nil {
			got, err = Collect(rows, ScanOne[string])
		}
		if err != nil || (c.want == "" && len(got) != 0) || (c.want != "" && (len(got) != 1 || got[0] != c.want)) {
			t.Errorf("%s = %#v: %v %v, want %q", c.key, c.v, got, err, c.want)
		}
	}
	err := db.Write(ctx, func(tx *sql.Tx) error {
		ids, err := d.ReserveIDs(ctx, tx, "t", 3)
		if err != nil || len(ids) != 3 || ids[0] < 4 || ids[1] != ids[0]+1 || ids[2] != ids[1]+1 {
			t.Errorf("reserved %v %v", ids, err)
		}
		if err := d.LockKey(ctx, tx, "rows:test"); err != nil {
			return err
		}
		if mine, err := d.TryLock(ctx, tx, 42); err != nil || !mine {
			t.Errorf("try lock: %v %v", mine, err)
		}
		var id string
		if err := tx.QueryRowContext(ctx, "SELECT "+d.UUID()).Scan(&id); err != nil || len(id) != 36 || id[14] != '4' {
			t.Errorf("uuid %q %v", id, err)
		}
		var all string
		if err := tx.QueryRowContext(ctx, "SELECT "+d.GroupConcat("v")+" FROM (SELECT v FROM t ORDER BY id) x").Scan(&all); err != nil || all != "a,b,c" {
			t.Errorf("group concat %q %v", all, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
