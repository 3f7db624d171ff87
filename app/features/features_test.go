package features_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/kbstore"
)

// With workers off (the CLI) the set has no background loop and leaves
// the embedding queue as a running server holds it; with workers on
// (serve) it takes back the unfinished sources of a previous run.
func TestWorkersOff(t *testing.T) {
	ctx := context.Background()
	for _, workers := range []bool{false, true} {
		db, org := storetest.WithOrg(t)
		col, err := db.KB.CreateCollection(ctx, org, "docs", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.KB.UpsertSource(ctx, org, col.ID, kbstore.SourceInput{ExternalID: "a", Title: "A", Content: "text"}); err != nil {
			t.Fatal(err)
		}
		// A server claimed it and died: its lease has run out.
		if jobs, _, err := db.KB.ClaimKBSources(ctx, "dead-server", -time.Second, 10, 1<<20); err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %d %v", len(jobs), err)
		}
		f, err := features.Open(ctx, features.Config{DBPath: db.Path(), Workers: workers, KB: kb.Config{EmbedDims: 64}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(f.Workers()); (n > 0) != workers {
			t.Errorf("workers=%v: %d workers", workers, n)
		}
		if f.Deliveries != nil && !workers {
			t.Error("delivery worker built with workers off")
		}
		// Left alone, the source is still there to take back.
		left, err := db.KB.ResetUnfinishedKB(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 0}[workers]; left != want {
			t.Errorf("workers=%v: %d unfinished sources left, want %d", workers, left, want)
		}
		// The use cases answer either way.
		if cols, _, err := f.KB.ListCollections(ctx, org, kb.Page{Limit: 10}); err != nil || len(cols) != 1 {
			t.Errorf("workers=%v: collections %d, %v", workers, len(cols), err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
