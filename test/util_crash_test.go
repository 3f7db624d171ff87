package test

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// Call states (DECISIONS.md "Calls").
var (
	liveCallStates  = []string{"initiated", "queued", "scheduled", "connecting", "ringing", "active"}
	finalCallStates = map[string]bool{"completed": true, "failed": true, "busy": true, "no_answer": true, "cancelled": true}
)

// settleLimit bounds the wait for background work after the last restart:
// the claim leases (2 s) plus the sim calls in flight and their retries.
const settleLimit = 30 * time.Second

// kbLease is the knowledge worker's built-in claim lease (embed.Worker).
const kbLease = 2 * time.Minute

// total is data.pagination.total of a list answer, or -1.
func total(r resp) int {
	p, _ := dataField(r, "pagination").(map[string]any)
	if n, ok := p["total"].(float64); ok && r.status == 200 {
		return int(n)
	}
	return -1
}

// pendingWork counts sources and calls that are not in a final state yet.
func pendingWork(t testing.TB, s *server, key, coll string) (sources, calls int) {
	for _, st := range []string{"pending", "processing"} {
		sources += total(s.must("GET", "/api/v1/kb/sources?limit=1&collectionId="+coll+"&status="+st, key, nil))
	}
	for _, st := range liveCallStates {
		calls += total(s.must("GET", "/api/v1/calls?limit=1&status="+st, key, nil))
	}
	return sources, calls
}

// checkAcknowledged waits (bounded) for background work to settle, then
// checks through the API that every acknowledged write is there once and
// in a final state.
func checkAcknowledged(t *testing.T, s *server, key, coll string, led *ledger, limit time.Duration, lives int) {
	t.Helper()
	var ps, pc int
	if !waitFor(limit, func() bool { ps, pc = pendingWork(t, s, key, coll); return ps == 0 && pc == 0 }) {
		t.Errorf("not settled after %s: %d sources and %d calls not final", limit, ps, pc)
	}

	// Sources: each acknowledged externalId once, with its document id, and
	// every source of the collection completed or failed.
	seen := map[string]int{}
	statuses := map[string]int{}
	for off := 0; ; off += 100 {
		r := s.must("GET", fmt.Sprintf("/api/v1/kb/sources?collectionId=%s&limit=100&offset=%d", coll, off), key, nil)
		srcs, _ := dataField(r, "sources").([]any)
		if r.status != 200 {
			t.Fatalf("list sources: %d %s", r.status, trunc(r.body))
		}
		for _, x := range srcs {
			m := x.(map[string]any)
			ext, _ := m["externalId"].(string)
			seen[ext]++
			st, _ := m["status"].(string)
			statuses[st]++
			if id := led.sources[ext]; id != "" && m["id"] != id {
				t.Errorf("source %s: id %v, acknowledged as %s", ext, m["id"], id)
			}
			if st == "failed" {
				t.Errorf("source %s failed: %v", ext, m["error"])
			}
			if n, _ := m["chunkCount"].(float64); st == "completed" && n < 1 {
				t.Errorf("source %s completed with %v chunks", ext, m["chunkCount"])
			}
		}
		if len(srcs) < 100 {
			break
		}
	}
	for ext, n := range seen {
		if n != 1 {
			t.Errorf("source %s listed %d times", ext, n)
		}
	}
	for ext := range led.sources {
		if seen[ext] != 1 {
			t.Errorf("acknowledged source %s listed %d times", ext, seen[ext])
		}
	}
	t.Logf("sources after the crashes: %d (%d acknowledged), by status %v", len(seen), len(led.sources), statuses)

	// Listings: each acknowledged externalId exactly once in the reads.
	lseen := map[string]int{}
	for life := range lives {
		r := s.must("GET", "/api/v1/listings/sync?category="+lifeCategory(life), key, nil)
		ls, _ := dataField(r, "listings").([]any)
		if r.status != 200 || len(ls) >= 10000 {
			t.Fatalf("read listings of life %d: %d, %d listings %s", life, r.status, len(ls), trunc(r.body))
		}
		for _, x := range ls {
			m, _ := x.(map[string]any)
			ext, _ := m["externalId"].(string)
			lseen[ext]++
		}
	}
	for ext, n := range lseen {
		if n != 1 {
			t.Errorf("listing %s read %d times", ext, n)
		}
	}
	for ext := range led.listings {
		if lseen[ext] != 1 {
			t.Errorf("acknowledged listing %s read %d times", ext, lseen[ext])
		}
	}
	t.Logf("listings after the crashes: %d (%d acknowledged)", len(lseen), len(led.listings))

	// Calls: each acknowledged call readable, final, cancelled if a cancel
	// was acknowledged.
	cstat := map[string]int{}
	for _, id := range led.calls {
		r := s.must("GET", "/api/v1/calls/"+url.PathEscape(id), key, nil)
		st, _ := dataField(r, "status").(string)
		cstat[st]++
		switch {
		case r.status != 200:
			t.Errorf("acknowledged call %s: %d %s", id, r.status, trunc(r.body))
		case !finalCallStates[st]:
			t.Errorf("call %s ended in %q, not a final state", id, st)
		case led.cancelled[id] && st != "cancelled":
			t.Errorf("call %s: cancel acknowledged, but it ended %q", id, st)
		}
	}
	t.Logf("acknowledged calls by final status: %v", cstat)
}

// checkCrashDB opens the stopped server's database and checks what the
// API cannot show: on SQLite the file's integrity and foreign keys (on
// PostgreSQL the server enforces both), then on both engines the call
// attempts against the dial log and knowledge chunks against their sources.
func checkCrashDB(t *testing.T, dbPath, dialLog string) {
	t.Helper()
	db := dbtest.Open(t, dbPath)
	defer db.Close()
	if !dbtest.Postgres() {
		var ic []string
		rows, err := db.Query("PRAGMA integrity_check")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			ic = append(ic, s)
		}
		rows.Close()
		if len(ic) != 1 || ic[0] != "ok" {
			t.Errorf("PRAGMA integrity_check: %q", ic)
		}
		if n := count(t, db, "SELECT count(*) FROM pragma_foreign_key_check"); n != 0 {
			t.Errorf("PRAGMA foreign_key_check: %d violations", n)
		}
	}

	// Calls: final, no claim left, attempts numbered 1..n, all settled, and
	// never more than 1 + maxRetries.
	for _, q := range []struct{ what, sql string }{
		{"calls not in a final state", "SELECT count(*) FROM calls WHERE status NOT IN ('completed','failed','busy','no_answer','cancelled')"},
		{"calls still holding a claim", "SELECT count(*) FROM calls WHERE claim_token IS NOT NULL"},
		{"calls with more attempts than 1 + maxRetries", "SELECT count(*) FROM calls WHERE attempts > 1 + max_retries"},
		{"calls whose attempts counter differs from their attempt rows",
			"SELECT count(*) FROM calls c WHERE attempts != (SELECT count(*) FROM call_attempts a WHERE a.call_id = c.id)"},
		{"calls whose attempt numbers are not 1..n",
			"SELECT count(*) FROM calls c WHERE attempts != coalesce((SELECT max(attempt) FROM call_attempts a WHERE a.call_id = c.id), 0)"},
		{"attempts never settled", "SELECT count(*) FROM call_attempts WHERE ended_at IS NULL OR status NOT IN ('completed','failed','busy','no_answer','cancelled')"},
		{"completed sources whose chunk rows differ from chunkCount",
			"SELECT count(*) FROM kb_sources s WHERE status = 'completed' AND chunk_count != (SELECT count(*) FROM kb_chunks k WHERE k.source_id = s.id)"},
		{"chunks of one source with a repeated index",
			"SELECT count(*) FROM (SELECT source_id, chunk_index FROM kb_chunks GROUP BY 1, 2 HAVING count(*) > 1) AS dup"},
		{"chunks of completed sources without a vector",
			"SELECT count(*) FROM kb_chunks k JOIN kb_sources s ON s.id = k.source_id WHERE s.status = 'completed' AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.space = 'kb:' || k.collection_id AND v.item_id = k.id)"},
	} {
		if n := count(t, db, q.sql); n != 0 {
			t.Errorf("%s: %d", q.what, n)
		}
	}
	calls := count(t, db, "SELECT count(*) FROM calls")
	attempts := count(t, db, "SELECT count(*) FROM call_attempts")
	interrupted := count(t, db, "SELECT count(*) FROM call_attempts WHERE failure_reason = 'interrupted'")
	retried := count(t, db, "SELECT count(*) FROM calls WHERE attempts > 1")

	// The dial log: one line per dial, written after the claim committed
	// and before the dialer ran. A repeated line is a double dial; a line
	// without its attempt row is a dial nobody recorded.
	if _, err := os.Stat(dialLog); err != nil {
		t.Fatalf("dial log: %v", err)
	}
	lines := testbin.DialLog(t, dialLog)
	dup := map[string]int{}
	for _, l := range lines {
		dup[l]++
	}
	stored := map[string]int{} // "callID attempt" -> attempt rows
	rows, err := db.Query("SELECT call_id, attempt FROM call_attempts")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var att int
		if err := rows.Scan(&id, &att); err != nil {
			t.Fatal(err)
		}
		stored[fmt.Sprintf("%s %d", id, att)]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for l, n := range dup {
		if n > 1 {
			t.Errorf("attempt %q dialled %d times", l, n)
		}
		var id string
		var att int
		if _, err := fmt.Sscanf(l, "%s %d", &id, &att); err != nil {
			t.Errorf("dial log line %q: %v", l, err)
			continue
		}
		if stored[fmt.Sprintf("%s %d", id, att)] != 1 {
			t.Errorf("dialled attempt %q has no attempt row", l)
		}
	}
	t.Logf("calls in the database: %d, attempts %d (%d interrupted by a kill, %d calls retried), dials logged %d",
		calls, attempts, interrupted, retried, len(lines))
}

func count(t testing.TB, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}
