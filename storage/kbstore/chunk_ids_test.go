package kbstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
)

// Four handles on one database (as four processes) complete sources at the
// same time: every chunk gets its own id. On PostgreSQL a block of ids
// reserved with nextval then setval overlapped the other transaction's
// (a duplicate kb_chunks key in a CI run).
func TestChunkIDsUniqueUnderConcurrentCompletions(t *testing.T) {
	ctx := context.Background()
	dbs := storetest.Handles(t, 4)
	org := storetest.Org(t, dbs[0])
	col, err := dbs[0].KB.CreateCollection(ctx, org, "docs", "")
	if err != nil {
		t.Fatal(err)
	}
	const sources, chunks = 300, 2
	for i := range sources {
		if _, err := dbs[0].KB.UpsertSource(ctx, org, col.ID, kbstore.SourceInput{ExternalID: fmt.Sprint(i), Title: "t",
			Content: fmt.Sprint("content ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errc := make(chan error, len(dbs))
	for w, db := range dbs {
		wg.Go(func() {
			owner := fmt.Sprint("w", w)
			for {
				j, err := claimOne(db, owner, time.Minute)
				if errors.Is(err, storage.ErrNotFound) {
					return
				}
				if err == nil {
					err = completeOne(db, j, owner, kbModel, kbChunks(chunks))
				}
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	var n, distinct int
	if err := dbs[0].Conn().Reader().QueryRowContext(ctx, "SELECT count(*), count(DISTINCT id) FROM kb_chunks").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != sources*chunks || distinct != n {
		t.Fatalf("%d chunks, %d distinct ids, want %d", n, distinct, sources*chunks)
	}
}
