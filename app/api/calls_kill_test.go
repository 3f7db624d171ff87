package api

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/internal/testkit/testbin"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// TestKillDuringDialing runs the real binary, SIGKILLs it while 200 calls
// are queued and dialling, starts it again on the same file and proves that
// every call ends in exactly one final state and no attempt was dialled
// twice. The dial log (--dial-log) gets one line per Dial call, written
// before the dialer runs, so it survives the kill.
func TestKillDuringDialing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin, err := testbin.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	dbPath, dialLog := dbtest.Path(t, "agentd.db"), filepath.Join(dir, "dials.log")
	ctx := context.Background()
	db := storetest.Open(t, dbPath)
	org, key, _, err := features.NewAccess(db).CreateOrg(ctx, "kill", "owner@kill.test")
	if err != nil {
		t.Fatal(err)
	}
	agent, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org.ID, Name: "Dialer", Type: "voice", Status: "active",
		PhoneNumbers: []string{"+15550001111"}})
	if err != nil {
		t.Fatal(err)
	}
	addr := testbin.FreeAddr(t)
	start := func() *testbin.Server {
		return testbin.Serve(t, testbin.Proc{Bin: bin, Addr: addr, Args: []string{"--db", dbPath, "--dialer", "sim",
			"--sim-call-seconds", "0.5", "--dial-cps", "100", "--max-concurrent-calls", "20",
			"--dial-lease", "1s", "--dial-log", dialLog, "--log-level", "error"}})
	}
	srv := start()
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", srv.Logs.String())
		}
	}()

	// 200 calls in 20 batches of 10; every other batch retries a failed
	// (interrupted) attempt once, so both endings of an interruption occur.
	retry := map[string]any{"maxRetries": 1, "retryOnFailed": true,
		"retryIntervals": []map[string]any{{"value": 0.01, "unit": "minutes"}}}
	for b := range 20 {
		calls := make([]map[string]any, 10)
		for i := range calls {
			calls[i] = map[string]any{"contactPhone": fmt.Sprintf("+1415%03d%04d", b, 1000+i)}
		}
		body := map[string]any{"agentId": agent.ID, "calls": calls}
		if b%2 == 1 {
			body["retryConfig"] = retry
		}
		code, _, resp := httpDo(t, "POST", "http://"+addr+"/api/v1/calls/batch", key, body)
		if code != 201 {
			t.Fatalf("batch: %d %s", code, resp)
		}
	}
	// Kill once enough attempts are in flight (ring 1 s + talk 0.5 s each).
	testkit.Eventually(t, 20*time.Second, func() bool { return len(testbin.DialLog(t, dialLog)) >= 40 }, "calls never started dialling")
	srv.Kill()
	before := len(testbin.DialLog(t, dialLog))
	live, _, err := db.Calls.ListCalls(ctx, callstore.CallFilter{OrgID: org.ID, Statuses: []string{"connecting", "ringing", "active"}, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(live) == 0 {
		t.Fatal("the kill caught no call mid-dial; the test proves nothing")
	}
	t.Logf("killed with %d dials made, %d calls mid-dial", before, len(live))

	srv = start()
	var all []callstore.Call
	final := 0
	testkit.Eventually(t, 60*time.Second, func() bool {
		all, _, err = db.Calls.ListCalls(ctx, callstore.CallFilter{OrgID: org.ID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		final = 0
		for _, c := range all {
			if callstore.CallFinal(c.Status) {
				final++
			}
		}
		return final == len(all)
	}, "not every call final after restart")
	if len(all) != 200 {
		t.Fatalf("%d calls stored, want 200", len(all))
	}

	dials := map[string]int{} // "call attempt" -> times dialled
	perCall := map[string]int{}
	for _, l := range testbin.DialLog(t, dialLog) {
		dials[l]++
		perCall[strings.Fields(l)[0]]++
	}
	for l, n := range dials {
		if n != 1 {
			t.Errorf("attempt %q dialled %d times", l, n)
		}
	}
	interrupted, retried := 0, 0
	for _, c := range all {
		atts, err := db.Calls.CallAttempts(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(atts) != c.Attempts || c.ClaimToken != "" {
			t.Errorf("call %s: %d attempt rows for attempts=%d, claim %q", c.ID, len(atts), c.Attempts, c.ClaimToken)
		}
		if perCall[c.ID] > c.Attempts {
			t.Errorf("call %s dialled %d times for %d attempts", c.ID, perCall[c.ID], c.Attempts)
		}
		for i, a := range atts {
			if a.Attempt != i+1 || !callstore.CallFinal(a.Status) || a.EndedAt == nil {
				t.Errorf("call %s attempt %+v not settled", c.ID, a)
			}
			if a.FailureReason == "interrupted" {
				interrupted++
				if c.MaxRetries > 0 && i == len(atts)-1 {
					t.Errorf("call %s: interrupted last attempt although a retry was allowed", c.ID)
				}
				if i < len(atts)-1 {
					retried++
				}
			}
		}
		switch {
		case c.Status == "completed":
		case c.Status == "failed" && c.FailureReason == "interrupted" && c.MaxRetries == 0:
		default:
			t.Errorf("call %s ended %s (%s), attempts %d, maxRetries %d", c.ID, c.Status, c.FailureReason, c.Attempts, c.MaxRetries)
		}
	}
	if interrupted == 0 || retried == 0 || retried == interrupted {
		t.Errorf("%d interrupted attempts, %d of them retried: both endings should occur", interrupted, retried)
	}
	t.Logf("after restart: %d dials in all, %d interrupted attempts settled, %d retried", len(dials), interrupted, retried)
	srv.Stop(10 * time.Second)
}

// httpDo sends a JSON request with the key (for tests without a testEnv).
func httpDo(t *testing.T, method, url, key string, body any) (int, http.Header, []byte) {
	e := &testEnv{t: t, client: &http.Client{}}
	return e.do(method, strings.TrimPrefix(url, e.url), key, body)
}
