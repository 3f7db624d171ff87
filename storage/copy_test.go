package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
	"github.com/agentd/agentd/storage/vectorstore"
)

// copyPair opens a fresh SQLite source and a fresh PostgreSQL target, or
// skips: Copy needs a PostgreSQL server (AGENTD_TEST_POSTGRES).
func copyPair(t testing.TB) (src, dst *Stores) {
	t.Helper()
	if !dbtest.Postgres() {
		t.Skip("copy to PostgreSQL: set " + dbtest.Env + " to a PostgreSQL server (see .ci/postgres.sh)")
	}
	ctx := context.Background()
	src, err := Open(ctx, filepath.Join(t.TempDir(), "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	dst, err = Open(ctx, dbtest.Path(t, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	return src, dst
}

// fillForCopy writes a bit of everything Copy must carry over exactly:
// counters kept by triggers (agents, call_hours, auth_epoch), vectors, and
// events whose newest rows were deleted (sqlite_sequence above max(seq)).
func fillForCopy(t testing.TB, db *Stores) {
	t.Helper()
	ctx := context.Background()
	o, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: o.ID, Name: "desk", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	var seeds []dashstore.SeedCall
	for i, st := range []string{"initiated", "queued", "scheduled", "connecting", "ringing", "active",
		"completed", "failed", "cancelled", "no_answer", "busy"} {
		seeds = append(seeds, dashstore.SeedCall{OrgID: o.ID, AgentID: a.ID, Status: st, Phone: fmt.Sprintf("+1555000%04d", i)})
	}
	ids, err := db.Dashboard.SeedCalls(ctx, seeds)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Dashboard.SetCallStatusForTest(ctx, ids[1], "completed"); err != nil { // queued -> completed
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	err = db.Conn().Write(ctx, func(tx *sql.Tx) error {
		// Calls that ended, counted by hour; one count brought to zero (a
		// recount would not keep that row, the copy must).
		if _, err := tx.ExecContext(ctx, "UPDATE calls SET ended_at = ?, answered_at = ? WHERE status IN ('completed', 'busy')", now, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE calls SET ended_at = ? WHERE status = 'failed'", now-7200_000); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE calls SET status = 'cancelled' WHERE status = 'failed'"); err != nil {
			return err
		}
		for i := range 5 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, org_id, type, subject, data, created_at)
				VALUES (?, ?, 'test', 'x', '{}', ?)`, fmt.Sprintf("ev%d", i), o.ID, now); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM events WHERE seq > 3")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var items []vectorstore.VectorItem
	for i := range 20 {
		v := make([]float32, 8)
		for j := range v {
			v[j] = rng.Float32()
		}
		items = append(items, vectorstore.VectorItem{ID: int64(i + 1), Vec: v})
	}
	if err := db.Vectors.PutVectors(ctx, "kb:test", vectorstore.VectorModel{Embedder: "builtin", Model: "x", Dims: 8}, items); err != nil {
		t.Fatal(err)
	}
	if err := db.Vectors.DeleteVectors(ctx, "kb:test", []int64{20}); err != nil {
		t.Fatal(err)
	}
}

// tableRows reads every row of table as text, sorted: equal on both
// engines when the data is. rowid is read from SQLite's rowid where the
// PostgreSQL table has that column.
func tableRows(t *testing.T, db *Stores, table string, cols []string) []string {
	t.Helper()
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
	}
	rows, err := db.Conn().Reader().QueryContext(context.Background(), "SELECT "+strings.Join(quoted, ", ")+` FROM "`+table+`"`)
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	defer rows.Close()
	var out []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v", vals))
	}
	slices.Sort(out)
	return out
}

// targetColumns lists a PostgreSQL table's columns.
func targetColumns(t *testing.T, db *Stores, table string) []string {
	t.Helper()
	rows, err := db.Conn().Reader().QueryContext(context.Background(), `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		out = append(out, c)
	}
	return out
}

// Every table arrives with exactly the source's rows, rowids and counters
// included, and new rows take new numbers afterwards.
func TestCopyToPostgres(t *testing.T) {
	src, dst := copyPair(t)
	fillForCopy(t, src)
	ctx := context.Background()
	var calls []string
	rep, err := Copy(ctx, src, dst, func(table string, n int64) { calls = append(calls, fmt.Sprintf("%s=%d", table, n)) })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows == 0 || len(rep.Tables) < 25 || !slices.Contains(calls, "vectors=19") {
		t.Fatalf("report %+v, progress %v", rep, calls)
	}
	var xids int
	if err := dst.Conn().Reader().QueryRow(`SELECT (SELECT count(*) FROM events WHERE xid <> '1')
		+ (SELECT count(*) FROM webhook_endpoints WHERE cursor_xid <> '1')`).Scan(&xids); err != nil || xids != 0 {
		t.Fatalf("%d copied events or cursors not at xid 1 (%v): they would be delivered again", xids, err)
	}
	pos := map[string]int{}
	for i, tc := range rep.Tables {
		pos[tc.Table] = i
		if tc.Source != tc.Target || tc.Copied != tc.Source {
			t.Errorf("%+v", tc)
		}
		cols := slices.DeleteFunc(targetColumns(t, dst, tc.Table), func(c string) bool {
			return c == "xid" || c == "cursor_xid" // PostgreSQL's event order (migration 0025): checked below
		})
		if got, want := tableRows(t, dst, tc.Table, cols), tableRows(t, src, tc.Table, cols); !slices.Equal(got, want) {
			t.Errorf("%s differs:\n target %v\n source %v", tc.Table, got, want)
		}
	}
	for _, pair := range [][2]string{{"orgs", "users"}, {"users", "api_keys"}, {"agents", "calls"}, {"calls", "call_attempts"},
		{"kb_collections", "kb_sources"}, {"kb_sources", "kb_chunks"}, {"webhook_endpoints", "webhook_deliveries"}} {
		if pos[pair[0]] > pos[pair[1]] {
			t.Errorf("%s copied after %s", pair[0], pair[1])
		}
	}
	for _, skip := range []string{"schema_migrations", "sqlite_sequence"} {
		if _, ok := pos[skip]; ok {
			t.Errorf("%s copied", skip)
		}
	}
	var counters [3]int64
	if err := dst.Conn().Reader().QueryRowContext(ctx, "SELECT live_calls, finished_calls, completed_calls FROM agents").Scan(&counters[0], &counters[1], &counters[2]); err != nil ||
		counters != [3]int64{3, 4, 2} {
		t.Fatalf("agent counters %v %v", counters, err)
	}
	// The event sequence goes on after the highest seq SQLite handed out,
	// not after the highest left (the newest events were deleted).
	var lastSeq, maxSeq int64
	src.Conn().Reader().QueryRowContext(ctx, "SELECT seq FROM sqlite_sequence WHERE name = 'events'").Scan(&lastSeq)
	src.Conn().Reader().QueryRowContext(ctx, "SELECT max(seq) FROM events").Scan(&maxSeq)
	if lastSeq <= maxSeq {
		t.Fatalf("fixture: sqlite_sequence %d, max(seq) %d", lastSeq, maxSeq)
	}
	wantSeq := map[string]int64{"events.seq": lastSeq, "vectors.vid": 19, "orgs.rowid": 1, "agents.rowid": 1}
	for _, s := range rep.Sequences {
		name := s.Table + "." + s.Column
		if v, ok := wantSeq[name]; ok && v != s.Value {
			t.Errorf("%s sequence set to %d, want %d", name, s.Value, v)
		}
		delete(wantSeq, name)
	}
	if len(wantSeq) > 0 {
		t.Errorf("sequences not reset: %v (report %+v)", wantSeq, rep.Sequences)
	}
	err = dst.Conn().Write(ctx, func(tx *sql.Tx) error {
		var seq int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO events (id, org_id, type, subject, data, created_at)
			SELECT 'new', id, 'test', 'x', '{}', 0 FROM orgs RETURNING seq`).Scan(&seq); err != nil {
			return err
		}
		if seq != lastSeq+1 {
			return fmt.Errorf("new event seq %d, want %d", seq, lastSeq+1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Orgs.CreateOrg(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	if err := dst.Vectors.PutVectors(ctx, "kb:test", vectorstore.VectorModel{Embedder: "builtin", Model: "x", Dims: 8}, []vectorstore.VectorItem{{ID: 99, Vec: make([]float32, 8)}}); err != nil {
		t.Fatal(err)
	}
	// The triggers work again: a call that completes counts once.
	var agentID, orgID string
	dst.Conn().Reader().QueryRowContext(ctx, "SELECT id, org_id FROM agents").Scan(&agentID, &orgID)
	if _, err := dst.Dashboard.SeedCalls(ctx, []dashstore.SeedCall{{OrgID: orgID, AgentID: agentID, Status: "completed"}}); err != nil {
		t.Fatal(err)
	}
	if err := dst.Conn().Reader().QueryRowContext(ctx, "SELECT completed_calls FROM agents").Scan(&counters[2]); err != nil || counters[2] != 3 {
		t.Fatalf("completed_calls after a new call: %d %v", counters[2], err)
	}
}

// A target with rows is refused, naming the table, and left as it was.
func TestCopyRefusesNonEmptyTarget(t *testing.T) {
	src, dst := copyPair(t)
	ctx := context.Background()
	fillForCopy(t, src)
	if _, err := dst.Orgs.CreateOrg(ctx, "already"); err != nil {
		t.Fatal(err)
	}
	_, err := Copy(ctx, src, dst, nil)
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "table orgs has 1 row(s)") {
		t.Fatalf("copy into a used database: %v", err)
	}
	orgs, _ := dst.Orgs.ListOrgs(ctx)
	if len(orgs) != 1 || orgs[0].Name != "already" {
		t.Fatalf("target changed: %+v", orgs)
	}
	if _, err := Copy(ctx, dst, src, nil); err == nil {
		t.Fatal("copy from PostgreSQL to SQLite accepted")
	}
}

// A copy that fails half way commits nothing: the target stays empty with
// its triggers enabled, and the next copy goes through.
func TestCopyFailureLeavesTargetEmpty(t *testing.T) {
	src, dst := copyPair(t)
	fillForCopy(t, src)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Copy(ctx, src, dst, func(table string, _ int64) {
		if table == "calls" {
			cancel()
		}
	})
	if err == nil {
		t.Fatal("cancelled copy succeeded")
	}
	var n int
	if err := dst.Conn().Reader().QueryRowContext(context.Background(), `SELECT (SELECT count(*) FROM orgs) + (SELECT count(*) FROM agents)
		+ (SELECT count(*) FROM calls) + (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgenabled = 'D')`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after a failed copy: %d rows or disabled triggers, %v", n, err)
	}
	if _, err := Copy(context.Background(), src, dst, nil); err != nil {
		t.Fatalf("copy after a failed one: %v", err)
	}
}

// BenchmarkCopyVectors copies 100,000 vectors of 384 dimensions (about
// 150 MB) and reports rows per second. Run it once: -benchtime=1x.
func BenchmarkCopyVectors(b *testing.B) {
	ctx := context.Background()
	src, _ := copyPair(b)
	const n, dims = 100_000, 384
	rng := rand.New(rand.NewPCG(1, 1))
	m := vectorstore.VectorModel{Embedder: "builtin", Model: "bench", Dims: dims}
	for start := 0; start < n; start += 5000 {
		items := make([]vectorstore.VectorItem, 5000)
		for i := range items {
			v := make([]float32, dims)
			for j := range v {
				v[j] = rng.Float32()
			}
			items[i] = vectorstore.VectorItem{ID: int64(start + i + 1), Vec: v}
		}
		if err := src.Vectors.PutVectors(ctx, "kb:bench", m, items); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dst, err := Open(ctx, dbtest.Path(b, "dst"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := Copy(ctx, src, dst, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Rows)/rep.Took.Seconds(), "rows/s")
		b.StopTimer()
		dst.Close()
	}
}
