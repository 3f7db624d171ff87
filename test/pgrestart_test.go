package test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// answer is one request of a fault test's load: when it was sent, how it
// was answered.
type answer struct {
	at     time.Time
	path   string
	status int
	retry  string
	body   string
	err    error
}

// faultLoad is a light request load on one agentd: readers list agents,
// writers create agents and schedule calls, each pausing 20 ms between
// requests; it keeps every answer and the ids that 2xx answers
// acknowledged.
type faultLoad struct {
	mu      sync.Mutex
	answers []answer
	agents  []string // acknowledged by 201
	calls   []string
	stop    chan struct{}
	wg      sync.WaitGroup
}

func startFaultLoad(s *server, key, agent string) *faultLoad {
	l := &faultLoad{stop: make(chan struct{})}
	loop := func(f func(i int) answer) {
		l.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				a := f(i)
				l.mu.Lock()
				l.answers = append(l.answers, a)
				l.mu.Unlock()
			}
		})
	}
	do := func(method, path string, body any) (answer, resp) {
		a := answer{at: time.Now(), path: method + " " + path}
		r, err := s.call(method, path, key, body)
		a.status, a.retry, a.body, a.err = r.status, r.header.Get("Retry-After"), string(r.body), err
		return a, r
	}
	for range 2 {
		loop(func(int) answer { a, _ := do("GET", "/api/v1/agents", nil); return a })
	}
	for w := range 2 {
		loop(func(i int) answer {
			a, r := do("POST", "/api/v1/agents", map[string]any{"name": fmt.Sprintf("fault %d-%d", w, i), "type": "voice",
				"status": "active", "model": "gpt-4o", "instructions": "Be brief."})
			if r.status == 201 {
				var b struct{ Data struct{ ID string } }
				json.Unmarshal(r.body, &b)
				l.mu.Lock()
				l.agents = append(l.agents, b.Data.ID)
				l.mu.Unlock()
			}
			return a
		})
	}
	loop(func(i int) answer {
		var calls []any
		for j := range 1 {
			calls = append(calls, map[string]any{"contactPhone": fmt.Sprintf("+1415%03d%04d", i%1000, 1000+j)})
		}
		a, r := do("POST", "/api/v1/calls/batch", map[string]any{"agentId": agent, "calls": calls})
		if r.status == 201 {
			res, _ := dataField(r, "results").([]any)
			l.mu.Lock()
			for _, x := range res {
				if m, _ := x.(map[string]any); m["callId"] != nil {
					l.calls = append(l.calls, m["callId"].(string))
				}
			}
			l.mu.Unlock()
		}
		return a
	})
	return l
}

func (l *faultLoad) end() {
	close(l.stop)
	l.wg.Wait()
}

// since is the answers to requests sent from t on.
func (l *faultLoad) since(t time.Time) []answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []answer
	for _, a := range l.answers {
		if !a.at.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// checkAnswers fails the test for an answer that is neither a success nor
// a 503 with Retry-After in the endpoint's error shape naming the
// database, and returns how many were 503.
func checkAnswers(t *testing.T, as []answer) (unavailable int) {
	t.Helper()
	bad := 0
	for _, a := range as {
		ok := a.err == nil && (a.status >= 200 && a.status < 300 ||
			a.status == 503 && a.retry != "" && strings.Contains(a.body, "database unavailable") &&
				(strings.HasPrefix(a.path, "POST /api/v1/calls") && strings.Contains(a.body, `"code":503`) ||
					!strings.HasPrefix(a.path, "POST /api/v1/calls") && strings.Contains(a.body, `"SERVICE_UNAVAILABLE"`)))
		if a.status == 503 {
			unavailable++
		}
		if !ok && bad < 5 {
			t.Errorf("%s at %s: %d (Retry-After %q, err %v) %s", a.path, a.at.Format("15:04:05.000"), a.status, a.retry, a.err, trunc([]byte(a.body)))
		}
		if !ok {
			bad++
		}
	}
	return unavailable
}

// TestPostgresRestartUnderLoad stops the PostgreSQL server under a light
// load (fast, then immediate) and starts it again: meanwhile every request
// is answered 503 with Retry-After in its family's shape (never 500),
// /healthz is 503, the workers do not flood the log; within 2 s of the
// server's return every request succeeds again; every agent and call a 2xx
// acknowledged is in the database, and no call attempt is dialled twice.
func TestPostgresRestartUnderLoad(t *testing.T) {
	if !dbtest.Postgres() || testing.Short() {
		t.Skip("PostgreSQL only (" + dbtest.Env + "), not in -short: stops and starts its own cluster")
	}
	pg := newPGCluster(t)
	pg.init()
	pg.start()
	dir := t.TempDir()
	url := pg.url("postgres")
	s := startOn(t, dir, url, "--dialer", "sim", "--sim-call-seconds", "0.2", "--dial-cps", "100", "--max-concurrent-calls", "100",
		"--dial-lease", "3s", "--dial-log", filepath.Join(dir, "dial.log"))
	key := s.newKey(100_000) // the load is not about the rate limit
	agent := dataID(t, s.must("POST", "/api/v1/agents", key, map[string]any{"name": "Dialer", "type": "voice",
		"status": "active", "model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}}))
	load := startFaultLoad(s, key, agent)
	defer load.end()

	// The sleeps below are the outage's script, spans of time the test
	// measures over, not waits for something to happen: a second of normal
	// load, 3 s down (the health check read halfway), 3 s back up.
	for _, mode := range []string{"fast", "immediate"} {
		time.Sleep(time.Second) // a span of normal load (see above)
		pg.stop(mode)
		down := time.Now()
		logsBefore := len(strings.Split(s.Logs.String(), "\n"))
		time.Sleep(1500 * time.Millisecond) // halfway through the outage (see above)
		if r, err := s.call("GET", "/healthz", "", nil); err != nil || r.status != 503 || r.header.Get("Retry-After") == "" {
			t.Errorf("stop -m %s: /healthz %d (Retry-After %q) %v", mode, r.status, r.header.Get("Retry-After"), err)
		}
		time.Sleep(1500 * time.Millisecond) // the rest of the 3 s outage whose log lines are counted (see above)
		workerLines, failedLines := 0, 0
		for _, l := range strings.Split(s.Logs.String(), "\n")[logsBefore:] {
			switch {
			case strings.Contains(l, `"msg":"request failed"`):
				failedLines++
			case l != "" && !strings.Contains(l, `"msg":"request"`): // not the access log
				workerLines++
			}
		}
		pg.start()
		up := time.Now()
		during := load.since(down)
		n := checkAnswers(t, during)
		t.Logf("stop -m %s: %d requests while down, %d answered 503; in 3 s %d error lines of requests, %d of workers",
			mode, len(during), n, failedLines, workerLines)
		if n == 0 {
			t.Errorf("stop -m %s: no request answered 503 while the server was down", mode)
		}
		if failedLines > 5 {
			t.Errorf("stop -m %s: %d request error lines in 3 s of outage: not throttled", mode, failedLines)
		}
		if workerLines > 40 {
			t.Errorf("stop -m %s: %d log lines in 3 s of outage: the workers flood the log\n%s", mode, workerLines, s.Logs.String())
		}
		time.Sleep(3 * time.Second) // the 3 s after the return whose answers are checked (see above)
		first := time.Time{}
		for _, a := range load.since(up) {
			if a.status >= 200 && a.status < 300 && first.IsZero() {
				first = a.at
			}
		}
		if first.IsZero() {
			t.Fatalf("stop -m %s: no request succeeded within 3 s of the server's return", mode)
		}
		after := load.since(up.Add(2 * time.Second))
		ok := 0
		for _, a := range after {
			if a.status >= 200 && a.status < 300 {
				ok++
			}
		}
		t.Logf("stop -m %s: first success %s after the server was back; %d of %d requests from 2 s on succeeded",
			mode, first.Sub(up).Round(time.Millisecond), ok, len(after))
		if ok != len(after) || len(after) == 0 {
			checkAnswers(t, after)
			t.Errorf("stop -m %s: %d of %d requests sent 2 s after the server's return failed", mode, len(after)-ok, len(after))
		}
	}
	load.end()
	load.stop = make(chan struct{}) // the deferred end finds nothing to stop

	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int {
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if n := count("SELECT count(*) FROM agents WHERE id = ANY($1)", load.agents); n != len(load.agents) {
		t.Errorf("%d of %d acknowledged agents are in the database", n, len(load.agents))
	}
	if n := count("SELECT count(*) FROM calls WHERE id = ANY($1)", load.calls); n != len(load.calls) {
		t.Errorf("%d of %d acknowledged calls are in the database", n, len(load.calls))
	}
	open := "SELECT count(*) FROM calls WHERE status NOT IN ('completed', 'failed', 'busy', 'no_answer', 'cancelled')"
	testkit.Within(60*time.Second, func() bool { return count(open) == 0 })
	if n := count(open); n > 0 {
		t.Errorf("%d calls still open a minute after the load", n)
		rows, err := db.Query(`SELECT id, status, coalesce(claim_token, ''), coalesce(worker_id, '') FROM calls WHERE ` + open[len("SELECT count(*) FROM calls WHERE "):])
		if err == nil {
			for rows.Next() {
				var id, st, tok, w string
				rows.Scan(&id, &st, &tok, &w)
				t.Logf("call %s %s claim %q worker %q", id, st, tok, w)
				for _, l := range strings.Split(s.Logs.String(), "\n") {
					if strings.Contains(l, id) {
						t.Log(l)
					}
				}
			}
			rows.Close()
		} else {
			t.Log(err)
		}
	}
	seen := map[string]bool{}
	dials := testbin.DialLog(t, filepath.Join(dir, "dial.log"))
	for _, d := range dials {
		if seen[d] {
			t.Errorf("attempt %s dialled twice", d)
		}
		seen[d] = true
	}
	t.Logf("%d agents and %d calls acknowledged, %d dials, %d calls completed", len(load.agents), len(load.calls),
		len(dials), count("SELECT count(*) FROM calls WHERE status = 'completed'"))
}
