package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// The campaign, do-not-call and settings commands on the database file.
func TestCampaignCLI(t *testing.T) {
	dbPath := newAgentCLIDB(t)
	ctx := context.Background()
	db, err := storage.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	orgs, _ := db.Orgs.ListOrgs(ctx)
	org := orgs[0].ID
	agent, _ := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "Ada", Type: "voice", Status: "active", PhoneNumbers: []string{"+15550001111"}})
	rows := make([]callstore.Call, 4)
	for i := range rows {
		rows[i] = callstore.Call{OrgID: org, AgentID: agent.ID, Status: callstore.CallScheduled,
			PhoneNumber: fmt.Sprintf("+1415555010%d", i), DueAt: time.Now().Add(time.Hour)}
	}
	b, _, err := db.Calls.CreateBatch(ctx, callstore.Batch{OrgID: org, AgentID: agent.ID, Name: "autumn"}, rows)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	out, _, err := runAgentCLI(t, dbPath, "batch", "list")
	if err != nil || !strings.Contains(out, b.ID) || !strings.Contains(out, "autumn") || !strings.Contains(out, "running") {
		t.Fatalf("batch list: %v\n%s", err, out)
	}
	if out, _, err = runAgentCLI(t, dbPath, "batch", "pause", b.ID); err != nil || !strings.Contains(out, "paused") {
		t.Fatalf("pause: %v %s", err, out)
	}
	if out, _, err = runAgentCLI(t, dbPath, "batch", "resume", b.ID); err != nil || !strings.Contains(out, "running") {
		t.Fatalf("resume: %v %s", err, out)
	}

	// dnc import: a CSV with a bad line; the listed number's waiting call fails.
	file := filepath.Join(t.TempDir(), "dnc.csv")
	os.WriteFile(file, []byte("phone,reason\n+14155550100,asked\nnot a number,\n+1 415 555 0199,\n"), 0o644)
	out, errOut, err := runAgentCLI(t, dbPath, "dnc", "import", file, "--reason", "file")
	if err != nil || !strings.Contains(out, "2 numbers added") || !strings.Contains(out, "1 waiting calls failed") || !strings.Contains(errOut, "line 3") {
		t.Fatalf("dnc import: %v\n%s\n%s", err, out, errOut)
	}
	out, _, err = runAgentCLI(t, dbPath, "dnc", "list", "--phone", "+14155550199")
	if err != nil || !strings.Contains(out, "+14155550199") || !strings.Contains(out, "file") {
		t.Fatalf("dnc list: %v %s", err, out)
	}
	if _, errOut, err = runAgentCLI(t, dbPath, "dnc", "add", "nope"); err == nil || !strings.Contains(errOut, "numbers[0]") {
		t.Fatalf("dnc add nope: %v %s", err, errOut)
	}

	out, _, err = runAgentCLI(t, dbPath, "--json", "batch", "get", b.ID)
	var v calls.BatchView
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v.Counts.Failed != 1 || v.Counts.Scheduled != 3 || v.Name != "autumn" {
		t.Fatalf("batch get: %v %s", err, out)
	}
	if out, _, err = runAgentCLI(t, dbPath, "batch", "cancel", b.ID); err != nil || !strings.Contains(out, "3 calls cancelled") {
		t.Fatalf("cancel: %v %s", err, out)
	}
	if _, errOut, err = runAgentCLI(t, dbPath, "batch", "pause", b.ID); err == nil || !strings.Contains(errOut, "batch is cancelled") {
		t.Fatalf("pause cancelled: %v %s", err, errOut)
	}

	// Calling hours: off by default, turned on and set from the CLI.
	if out, _, err = runAgentCLI(t, dbPath, "settings", "show"); err != nil || !strings.Contains(out, "calling hours: off, 08:00-21:00") {
		t.Fatalf("settings show: %v %s", err, out)
	}
	out, _, err = runAgentCLI(t, dbPath, "settings", "calling-hours", "--enable", "--start", "09:00", "--days", "1,2,3,4,5", "--timezone", "America/Chicago")
	if err != nil || !strings.Contains(out, "calling hours: on, 09:00-21:00 on days 1,2,3,4,5, default zone America/Chicago") {
		t.Fatalf("calling-hours: %v %s", err, out)
	}
	if _, errOut, err = runAgentCLI(t, dbPath, "settings", "calling-hours", "--end", "08:00"); err == nil || !strings.Contains(errOut, "callingHours.end") {
		t.Fatalf("bad end: %v %s", err, errOut)
	}
}
