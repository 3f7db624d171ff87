package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/storage"
)

// collection create/list/delete and reindex through the command tree, on a
// real database file.
func TestKBCLI(t *testing.T) {
	path := newAgentCLIDB(t)
	out, _, err := runAgentCLI(t, path, "--json", "collection", "create", "docs", "--description", "product docs")
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ ID, Name string }
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.Name != "docs" || c.ID == "" {
		t.Fatalf("create: %q %v", out, err)
	}
	if _, _, err := runAgentCLI(t, path, "collection", "create", "docs"); err == nil || err.Error() != `a collection named "docs" already exists` {
		t.Fatalf("duplicate: %v", err)
	}
	ctx := context.Background()
	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	orgs, _ := db.ListOrgs(ctx)
	if _, err := db.UpsertSource(ctx, orgs[0].ID, c.ID, storage.SourceInput{ExternalID: "a", Title: "A", Content: "hello world"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// reindex processes queued sources in-process with the chosen embedder.
	out, _, err = runAgentCLI(t, path, "--json", "reindex", "--embed-dims", "128")
	if err != nil || !strings.Contains(out, `"processed": 1`) {
		t.Fatalf("reindex: %q %v", out, err)
	}
	// A different embedder re-embeds every source of the collection.
	out, _, err = runAgentCLI(t, path, "--json", "reindex", "--embed-dims", "256", "--collection", "docs")
	if err != nil || !strings.Contains(out, `"queued": 1`) || !strings.Contains(out, `"processed": 1`) {
		t.Fatalf("reindex after embedder change: %q %v", out, err)
	}
	out, _, _ = runAgentCLI(t, path, "collection", "list")
	if !strings.Contains(out, "docs") || !strings.Contains(out, c.ID) {
		t.Fatalf("list: %q", out)
	}
	if out, _, err = runAgentCLI(t, path, "collection", "delete", "docs"); err != nil || !strings.Contains(out, "deleted") {
		t.Fatalf("delete: %q %v", out, err)
	}
	if _, _, err = runAgentCLI(t, path, "collection", "delete", "docs"); err == nil {
		t.Fatal("second delete succeeded")
	}
}
