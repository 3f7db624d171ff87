package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
)

// runAgentCLI runs agentd with args on the database and returns stdout, stderr
// and the error.
func runAgentCLI(t *testing.T, dbPath string, args ...string) (string, string, error) {
	t.Helper()
	root := NewRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"--db", dbPath}, args...))
	err := Execute(context.Background(), root)
	return out.String(), errOut.String(), err
}

// newAgentCLIDB makes a database with one organization, as 'agentd serve' would.
func newAgentCLIDB(t *testing.T) string {
	t.Helper()
	path := dbtest.Path(t, "agentd.db")
	db, err := storage.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, _, err := features.NewAccess(db).Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAgentCLI(t *testing.T) {
	dbPath := newAgentCLIDB(t)
	out, _, err := runAgentCLI(t, dbPath, "--json", "agent", "create", "--name", "Desk", "--type", "voice",
		"--config", `{"voice":"alloy","speed":1.5}`, "--phone", "+1 415 555 0100", "--phone", "+442071838750",
		"--tools", `[{"id":"t","name":"lookup","description":"d"}]`)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var a agents.View
	if err := json.Unmarshal([]byte(out), &a); err != nil || a.ID == "" || a.Status != "active" ||
		strings.Join(*a.PhoneNumbers, ",") != "+14155550100,+442071838750" {
		t.Fatalf("create output %s: %v", out, err)
	}

	// The same validation as the API: each bad input fails and prints once.
	for _, bad := range [][]string{
		{"agent", "create", "--name", "x", "--type", "robot"},
		{"agent", "create", "--type", "voice"},
		{"agent", "create", "--name", "x", "--type", "chat", "--phone", "+15551230000"},
		{"agent", "create", "--name", "x", "--type", "voice", "--config", `{"speed":9}`},
		{"agent", "create", "--name", "x", "--type", "chat", "--config", `{"primaryColor":"red"}`},
		{"agent", "create", "--name", "x", "--type", "voice", "--phone", "555"},
		{"agent", "list", "--limit", "101"},
		{"agent", "get", "00000000-0000-4000-8000-000000000000"},
	} {
		_, stderr, err := runAgentCLI(t, dbPath, bad...)
		if err == nil || strings.Count(stderr, "agentd:") != 1 {
			t.Errorf("%v: err %v stderr %q", bad, err, stderr)
		}
	}

	if _, _, err := runAgentCLI(t, dbPath, "agent", "create", "--name", "Widget", "--type", "chat", "--status", "training"); err != nil {
		t.Fatal(err)
	}
	out, _, err = runAgentCLI(t, dbPath, "--json", "agent", "list", "--type", "voice")
	var l struct {
		Agents  []agents.View
		HasMore bool
	}
	if err != nil || json.Unmarshal([]byte(out), &l) != nil || len(l.Agents) != 1 || l.Agents[0].ID != a.ID {
		t.Fatalf("list voice: %v %s", err, out)
	}
	out, _, _ = runAgentCLI(t, dbPath, "agent", "list", "--limit", "1")
	if !strings.Contains(out, "Widget") || strings.Contains(out, "Desk") || !strings.Contains(out, "--offset 1") {
		t.Fatalf("list page 1:\n%s", out)
	}

	// update changes only the flags given; --phone '' clears the numbers.
	out, _, err = runAgentCLI(t, dbPath, "--json", "agent", "update", a.ID, "--model", "m2", "--phone", "")
	var u agents.View
	if err != nil || json.Unmarshal([]byte(out), &u) != nil || u.Model != "m2" || len(*u.PhoneNumbers) != 0 ||
		agentCompactJSON(u.Config) != `{"speed":1.5,"voice":"alloy"}` || u.Name != "Desk" {
		t.Fatalf("update: %v %s", err, out)
	}
	out, _, err = runAgentCLI(t, dbPath, "agent", "delete", a.ID)
	if err != nil || !strings.Contains(out, "inactive") {
		t.Fatalf("delete: %v %s", err, out)
	}
	out, _, err = runAgentCLI(t, dbPath, "agent", "get", a.ID)
	if err != nil || !strings.Contains(out, "inactive") || !strings.Contains(out, "lookup") {
		t.Fatalf("get: %v %s", err, out)
	}

	// Jobs.
	out, _, err = runAgentCLI(t, dbPath, "--json", "job", "create", "--agent", a.ID, "--name", "Calls", "--trust", "autonomous")
	var j agents.JobView
	if err != nil || json.Unmarshal([]byte(out), &j) != nil || j.TrustLevel != "autonomous" || j.TriggerType != "manual" {
		t.Fatalf("job create: %v %s", err, out)
	}
	if _, _, err := runAgentCLI(t, dbPath, "job", "create", "--agent", a.ID, "--name", "x", "--trigger", "cron"); err == nil {
		t.Error("bad trigger accepted")
	}
	if out, _, err = runAgentCLI(t, dbPath, "job", "update", j.ID, "--status", "paused"); err != nil || !strings.Contains(out, "paused") {
		t.Fatalf("job update: %v %s", err, out)
	}
	if out, _, err = runAgentCLI(t, dbPath, "job", "list", "--agent", a.ID); err != nil || !strings.Contains(out, j.ID) {
		t.Fatalf("job list: %v %s", err, out)
	}
	if _, _, err = runAgentCLI(t, dbPath, "job", "delete", j.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err = runAgentCLI(t, dbPath, "job", "delete", j.ID); err == nil {
		t.Error("second job delete succeeded")
	}
}

func agentCompactJSON(raw []byte) string {
	var b bytes.Buffer
	json.Compact(&b, raw)
	return b.String()
}
