package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/embedtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
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
	orgs, _ := db.Orgs.ListOrgs(ctx)
	if _, err := db.KB.UpsertSource(ctx, orgs[0].ID, c.ID, kbstore.SourceInput{ExternalID: "a", Title: "A", Content: "hello world"}); err != nil {
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

// agentd reindex --failed on a real file, against a real local HTTP
// embedding service: a reindex while the service answers 503 leaves the
// source failed (with its retry scheduled); once the service is back,
// --failed processes it now.
func TestReindexFailedCLI(t *testing.T) {
	path := newAgentCLIDB(t)
	srv := embedtest.New(t, 64)
	if _, _, err := runAgentCLI(t, path, "collection", "create", "docs"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := storetest.Open(t, path)
	orgs, _ := db.Orgs.ListOrgs(ctx)
	col, err := db.KB.FindCollection(ctx, orgs[0].ID, "docs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.KB.UpsertSource(ctx, orgs[0].ID, col.ID, kbstore.SourceInput{ExternalID: "a", Title: "A", Content: "hello world"}); err != nil {
		t.Fatal(err)
	}
	source := func() kbstore.Source {
		t.Helper()
		l, _, err := db.KB.ListSources(ctx, col.ID, kbstore.SourceFilter{Limit: 10})
		if err != nil || len(l) != 1 {
			t.Fatalf("sources %+v %v", l, err)
		}
		return l[0]
	}
	reindex := func(args ...string) string {
		t.Helper()
		out, _, err := runAgentCLI(t, path, append([]string{"--json", "reindex", "--embedder", "openai", "--openai-base-url", srv.URL,
			"--openai-model", "test-model", "--openai-dimensions", "64", "--embed-retries=-1"}, args...)...)
		if err != nil {
			t.Fatalf("reindex %v: %q %v", args, out, err)
		}
		return out
	}

	srv.Set(embedtest.Unavailable)
	reindex()
	if s := source(); s.Status != "failed" || s.Error == nil || !strings.Contains(*s.Error, "HTTP 503") || !strings.Contains(*s.Error, "; retry 1 of 5 at ") {
		t.Fatalf("after a reindex with the service down: %+v", s)
	}
	srv.Set(embedtest.Up)
	if out := reindex(); !strings.Contains(out, `"processed": 0`) {
		t.Fatalf("reindex without --failed took the failed source before its retry: %q", out)
	}
	out := reindex("--failed")
	if !strings.Contains(out, `"queued": 1`) || !strings.Contains(out, `"processed": 1`) {
		t.Fatalf("reindex --failed: %q", out)
	}
	if s := source(); s.Status != "completed" || s.Error != nil || s.ChunkCount != 1 {
		t.Fatalf("after reindex --failed: %+v", s)
	}
}
