package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/storage"
)

// webhook create/list/deliveries/retry/delete through the command tree, on
// a real database file.
func TestWebhookCLI(t *testing.T) {
	path := newAgentCLIDB(t)
	if _, _, err := runAgentCLI(t, path, "webhook", "create", "http://127.0.0.1:9/hooks"); err == nil ||
		!strings.Contains(err.Error(), "url: host 127.0.0.1") {
		t.Fatalf("loopback receiver accepted: %v", err)
	}
	if _, _, err := runAgentCLI(t, path, "webhook", "create", "https://93.184.216.34/h", "--events", "call.nope"); err == nil ||
		!strings.Contains(err.Error(), "events.0") {
		t.Fatalf("unknown type accepted: %v", err)
	}
	out, _, err := runAgentCLI(t, path, "--json", "webhook", "create", "http://127.0.0.1:9/hooks", "--webhook-allow-private",
		"--events", "call.ended,call.result", "--description", "CRM")
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		ID, Secret string
		Events     []string
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil || !strings.HasPrefix(w.Secret, "whsec_") || len(w.Events) != 2 {
		t.Fatalf("create: %q %v", out, err)
	}
	out, _, _ = runAgentCLI(t, path, "webhook", "list")
	if !strings.Contains(out, w.ID) || strings.Contains(out, "whsec_") || !strings.Contains(out, "call.ended,call.result") {
		t.Fatalf("list: %q", out)
	}
	// A delivery waiting for the server's worker.
	ctx := context.Background()
	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	orgs, _ := db.Orgs.ListOrgs(ctx)
	ev, err := db.Webhooks.PingWebhook(ctx, orgs[0].ID, w.ID, map[string]string{"webhookId": w.ID})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ = runAgentCLI(t, path, "--json", "webhook", "deliveries", w.ID)
	var page struct {
		Deliveries []struct{ ID, EventID, Status string }
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Deliveries) != 1 ||
		page.Deliveries[0].EventID != ev.ID || page.Deliveries[0].Status != "pending" {
		t.Fatalf("deliveries: %q %v", out, err)
	}
	if out, _, err = runAgentCLI(t, path, "webhook", "retry", w.ID, page.Deliveries[0].ID); err != nil || !strings.Contains(out, "queued again") {
		t.Fatalf("retry: %q %v", out, err)
	}
	if out, _, err = runAgentCLI(t, path, "webhook", "delete", w.ID); err != nil || !strings.Contains(out, "deleted") {
		t.Fatalf("delete: %q %v", out, err)
	}
	if _, _, err = runAgentCLI(t, path, "webhook", "delete", w.ID); err == nil || err.Error() != "webhook not found" {
		t.Fatalf("second delete: %v", err)
	}
}
