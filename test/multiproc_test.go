package test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// multiCPS is the trunk's pace in the three-process test: 1,000 calls take
// 25 s, and with calls of 1.3 s (ring 1 s, talk 0.3 s) about 52 are up at
// once, plus those claimed ahead of their slot and, for a lease's time,
// those of the killed process: under the cap of 100.
const multiCPS = 40

// TestThreeProcesses runs three agentd processes on one PostgreSQL
// database, as three machines behind a load balancer, with a client that
// spreads its requests over them. It checks that they behave as one
// service: a key revoked through one fails on the others at once, the
// per-key rate limit holds across the three, and 1,000 calls are dialled
// at the trunk's pace (not three times it) exactly once each, although one
// process is SIGKILLed midway: its leases run out and the others finish
// its calls.
func TestThreeProcesses(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("needs " + dbtest.Env + ": three processes share one PostgreSQL database")
	}
	dir := t.TempDir()
	url := dbtest.Path(t, "")
	procs := make([]*server, 3)
	for i := range procs {
		procs[i] = startOn(t, dir, url, "--dialer", "sim", "--sim-call-seconds", "0.3",
			"--dial-cps", fmt.Sprint(multiCPS), "--max-concurrent-calls", "100", "--dial-lease", "2s",
			"--dial-log", filepath.Join(dir, fmt.Sprintf("dial-%d.log", i)))
	}
	owner := procs[0].Key
	if owner == "" {
		t.Fatal("the first process printed no owner key")
	}

	t.Run("revocation reaches every process at once", func(t *testing.T) {
		var k struct{ ID, Key string }
		if err := json.Unmarshal([]byte(procs[1].cli("key", "create", "--never-expires", "--json")), &k); err != nil {
			t.Fatal(err)
		}
		for i, p := range procs { // every process has the key in its cache
			if r := p.must("GET", "/api/v1/agents", k.Key, nil); r.status != 200 {
				t.Fatalf("process %d before revocation: %d %s", i, r.status, r.body)
			}
		}
		if r := procs[0].must("DELETE", "/api/v2/api-keys/"+k.ID, owner, nil); r.status != 200 && r.status != 204 {
			t.Fatalf("revoke through process 0: %d %s", r.status, r.body)
		}
		// The revoking process refuses at once; the others drop their auth
		// cache on the NOTIFY, milliseconds later.
		revoked := time.Now()
		for i, p := range procs {
			within := time.Second
			if i == 0 {
				within = 0 // the revoking process: its first answer
			}
			status := 0
			if testkit.Within(within, func() bool {
				status = p.must("GET", "/api/v1/agents", k.Key, nil).status
				return status == 401
			}) {
				t.Logf("process %d refuses the key %s after the revocation", i, time.Since(revoked).Round(time.Microsecond))
			} else {
				t.Errorf("process %d after the revocation: %d, want 401", i, status)
			}
		}
	})

	t.Run("rate limit across the three", func(t *testing.T) {
		const limit = 90
		key := procs[2].newKey(limit)
		var admitted, refused, other atomic.Int64
		var wg sync.WaitGroup
		for w := range 12 {
			wg.Go(func() {
				for i := w; i < 2*limit; i += 12 {
					r, err := procs[i%3].call("GET", "/api/v1/agents", key, nil)
					switch {
					case err != nil:
						other.Add(1)
					case r.status == 200:
						admitted.Add(1)
					case r.status == 429:
						refused.Add(1)
					default:
						other.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if admitted.Load() != limit || refused.Load() != limit || other.Load() != 0 {
			t.Errorf("%d requests over three processes to a key of %d a minute: admitted %d, refused %d, other %d",
				2*limit, limit, admitted.Load(), refused.Load(), other.Load())
		}
	})

	agent := dataID(t, procs[1].must("POST", "/api/v1/agents", owner, map[string]any{"name": "Dialer", "type": "voice",
		"status": "active", "model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}}))

	// 1,000 calls in ten batches of 100, posted to the three in turn.
	// Interrupted attempts are retried at once (retryOnFailed, a past time).
	var ids sync.Map
	var wg sync.WaitGroup
	for b := range 10 {
		wg.Go(func() {
			var calls []any
			for i := range 100 {
				calls = append(calls, map[string]any{"contactPhone": fmt.Sprintf("+1415%03d%04d", b, 1000+i)})
			}
			past := time.Now().UTC().Format(time.RFC3339)
			r := procs[b%3].must("POST", "/api/v1/calls/batch", owner, map[string]any{"agentId": agent, "calls": calls,
				"retryConfig": map[string]any{"retryOnFailed": true}, "retrySchedule": []string{past, past}})
			if r.status != 201 {
				t.Errorf("batch %d through process %d: %d %s", b, b%3, r.status, r.body)
				return
			}
			res, _ := dataField(r, "results").([]any)
			for _, x := range res {
				if m, _ := x.(map[string]any); m["callId"] != nil {
					ids.Store(m["callId"], true)
				}
			}
		})
	}
	wg.Wait()
	total := 0
	ids.Range(func(any, any) bool { total++; return true })
	if total != 1000 {
		t.Fatalf("%d calls scheduled, want 1000", total)
	}

	dials := func() []testbin.Dial { return allDials(t, dir, len(procs)) }
	if !testkit.Within(60*time.Second, func() bool { return len(dials()) >= 450 }) {
		t.Fatalf("only %d dials after a minute", len(dials()))
	}
	procs[2].Kill()
	killedAt := time.Now()

	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string) int {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	const open = "SELECT count(*) FROM calls WHERE status NOT IN ('completed', 'failed', 'busy', 'no_answer', 'cancelled')"
	if !testkit.Within(90*time.Second, func() bool { return count(open) == 0 }) {
		t.Fatalf("calls still open 90 s after the kill: %d", count(open))
	}
	t.Logf("all calls final %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	// Nothing lost: every call completed (interrupted attempts were retried
	// by the survivors), every dial has its attempt row and no attempt was
	// dialled twice.
	if n := count("SELECT count(*) FROM calls WHERE status = 'completed'"); n != 1000 {
		t.Errorf("%d of 1,000 calls completed", n)
		rows, err := db.Query(`SELECT c.id, c.status, coalesce(c.failure_reason, ''), a.attempt, a.status,
			coalesce(a.failure_reason, ''), a.worker_id FROM calls c JOIN call_attempts a ON a.call_id = c.id
			WHERE c.status != 'completed' ORDER BY c.id, a.attempt`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, st, why, ast, awhy, w string
			var n int
			rows.Scan(&id, &st, &why, &n, &ast, &awhy, &w)
			t.Logf("call %s %s (%s): attempt %d %s (%s) by %s", id, st, why, n, ast, awhy, w)
		}
		rows.Close()
	}
	all := dials()
	seen := map[string]bool{}
	perProc := make([]int, 3)
	for i := range procs {
		perProc[i] = len(testbin.Dials(t, filepath.Join(dir, fmt.Sprintf("dial-%d.log", i))))
	}
	for _, d := range all {
		k := fmt.Sprintf("%s %d", d.ID, d.Attempt)
		if seen[k] {
			t.Errorf("attempt %s dialled twice", k)
		}
		seen[k] = true
	}
	// Every dial has its attempt row; an attempt without a dial is one the
	// killed process claimed ahead of its slot, settled as interrupted.
	rows, err := db.Query("SELECT call_id, attempt, coalesce(failure_reason, '') FROM call_attempts")
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	for rows.Next() {
		var id, why string
		var n int
		rows.Scan(&id, &n, &why)
		stored[fmt.Sprintf("%s %d", id, n)] = why
	}
	rows.Close()
	for k := range seen {
		if _, ok := stored[k]; !ok {
			t.Errorf("attempt %s dialled but not stored", k)
		}
	}
	for k, why := range stored {
		if !seen[k] && why != "interrupted" {
			t.Errorf("attempt %s stored (%q) but never dialled", k, why)
		}
	}
	interrupted := count("SELECT count(*) FROM call_attempts WHERE failure_reason = 'interrupted'")
	if interrupted == 0 {
		t.Error("the kill interrupted no attempt: it missed the dialling")
	}
	if count("SELECT count(*) FROM calls WHERE claim_token IS NOT NULL") != 0 {
		t.Error("claims left on final calls")
	}
	t.Logf("%d dials for 1,000 calls (%d attempts interrupted by the kill and retried), by process: %v",
		len(all), interrupted, perProc)
	if perProc[0] < 100 || perProc[1] < 100 || perProc[2] < 50 {
		t.Errorf("dials by process %v: the three did not share the work", perProc)
	}

	// The pace: the first 900 dials, while the queue was never empty, at
	// the trunk's CPS within 5%, and no second holds more than that either.
	first := all[:900]
	rate := float64(len(first)-1) / first[len(first)-1].At.Sub(first[0].At).Seconds()
	t.Logf("pace across three processes: %.2f dials/s for a trunk of %d CPS", rate, multiCPS)
	gaps := make([]time.Duration, len(first)-1)
	for i := range gaps {
		gaps[i] = first[i+1].At.Sub(first[i].At)
	}
	slices.Sort(gaps)
	t.Logf("gaps between dials: median %v, p99 %v, max %v", gaps[len(gaps)/2], gaps[len(gaps)*99/100], gaps[len(gaps)-1])
	if rate < multiCPS*0.95 || rate > multiCPS*1.05 {
		t.Errorf("pace %.2f dials/s, want %d within 5%%", rate, multiCPS)
	}
	for i := range all {
		j := i
		for j < len(all) && all[j].At.Sub(all[i].At) < time.Second {
			j++
		}
		if float64(j-i) > multiCPS*1.05+1 {
			t.Errorf("%d dials in the second from %s", j-i, all[i].At.Format("15:04:05.000"))
			break
		}
	}
}

// startOn runs agentd serve on the database db (a PostgreSQL URL) with
// extra flags and waits until it answers /healthz.
func startOn(t testing.TB, dir, db string, extra ...string) *server {
	t.Helper()
	p := testbin.Serve(t, testbin.Proc{Bin: agentdBin, Dir: dir, Args: append([]string{"--db", db, "--log-format", "json"}, extra...)})
	return &server{Server: p, t: t, db: db}
}

// startProcs runs n agentd processes (startOn) on one new database of the
// backend under test, in a new directory, which it returns: process i with
// the flags flags(dir, i) returns (none if flags is nil).
func startProcs(t testing.TB, n int, flags func(dir string, i int) []string) ([]*server, string) {
	t.Helper()
	dir := t.TempDir()
	url := dbtest.Path(t, "agentd.db")
	procs := make([]*server, n)
	for i := range procs {
		var extra []string
		if flags != nil {
			extra = flags(dir, i)
		}
		procs[i] = startOn(t, dir, url, extra...)
	}
	return procs, dir
}

// voiceAgent creates an active voice agent named name through s with key
// and returns its id.
func (s *server) voiceAgent(key, name string) string {
	s.t.Helper()
	return dataID(s.t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": name, "type": "voice",
		"status": "active", "model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}}))
}

// allDials is the dials of the n processes' logs dir/dial-<i>.log, in
// the order they began.
func allDials(t testing.TB, dir string, n int) []testbin.Dial {
	var all []testbin.Dial
	for i := range n {
		all = append(all, testbin.Dials(t, filepath.Join(dir, fmt.Sprintf("dial-%d.log", i)))...)
	}
	slices.SortFunc(all, func(a, b testbin.Dial) int { return a.At.Compare(b.At) })
	return all
}
