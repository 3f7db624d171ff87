package test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// A call scheduled through process A is dialled by process B when it falls
// due, though B never saw the request: the insert's NOTIFY told B's
// scheduler, which sleeps until the due time. Without it B would find the
// call at its safety poll, 30 s after it last looked.
func TestCallScheduledElsewhereIsDialledOnTime(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("needs " + dbtest.Env + ": two processes on one PostgreSQL database")
	}
	dir := t.TempDir()
	url := dbtest.Path(t, "")
	sim := func(log string) []string {
		return []string{"--dialer", "sim", "--sim-call-seconds", "0.1", "--dial-log", filepath.Join(dir, log)}
	}
	a := startOn(t, dir, url, sim("dial-a.log")...)
	b := startOn(t, dir, url, sim("dial-b.log")...)
	owner := a.Key
	agent := dataID(t, a.must("POST", "/api/v1/agents", owner, map[string]any{"name": "Dialer", "type": "voice",
		"status": "active", "model": "gpt-4o", "instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}}))
	// Whole seconds (the API's precision), a few ahead.
	due := time.Now().Add(3 * time.Second).Truncate(time.Second)
	r := a.must("POST", "/api/v1/calls/schedule", owner, map[string]any{"agentId": agent, "contactPhone": "+14155550123",
		"scheduledAt": due.UTC().Format(time.RFC3339)})
	if r.status != 200 && r.status != 201 {
		t.Fatalf("schedule through A: %d %s", r.status, r.body)
	}
	id := dataID(t, r)
	if err := a.Stop(10 * time.Second); err != nil { // only B is left to dial it
		t.Fatal(err)
	}
	var dial testbin.Dial
	if !testkit.Within(time.Until(due.Add(5*time.Second)), func() bool {
		for _, d := range testbin.Dials(t, filepath.Join(dir, "dial-b.log")) {
			if d.ID == id {
				dial = d
			}
		}
		return dial.ID != ""
	}) {
		t.Fatalf("call %s due at %s not dialled by B 5 s later\n%s", id, due.Format("15:04:05.000"), b.Logs.String())
	}
	late := dial.At.Sub(due)
	t.Logf("due %s, dialled by B %s after", due.Format("15:04:05.000"), late.Round(time.Millisecond))
	if late < 0 || late > time.Second {
		t.Errorf("dialled %s after its due time, want within a second (the safety poll is 30 s)", late)
	}
	if n := len(testbin.Dials(t, filepath.Join(dir, "dial-a.log"))); n != 0 {
		t.Errorf("A dialled %d calls; it stopped before the call was due", n)
	}
}
