package orgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/orgstore"
)

// PruneRates deletes only the old buckets of keys under its prefix: a
// key's recent buckets still count, and another prefix's stay for their
// own next lease.
func TestPruneRates(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	t0 := time.Unix(1_800_000_000, 0)
	lease := func(key string, at time.Time) orgstore.Lease {
		t.Helper()
		l, err := db.Orgs.LeaseRate(ctx, key, 5, 5, time.Minute, at, orgstore.Unused{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	lease("widget:visitor:old", t0)
	lease("key-1", t0)
	lease("widget:visitor:new", t0.Add(2*time.Minute))
	now := t0.Add(2*time.Minute + time.Second)
	n, err := db.Orgs.PruneRates(ctx, "widget:", time.Minute, now)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want the one old widget bucket", n, err)
	}
	if n, err := db.Orgs.PruneRates(ctx, "widget:", time.Minute, now); err != nil || n != 0 {
		t.Fatalf("pruned again %d, %v", n, err)
	}
	// What is left still counts: the new key's window is full, the API
	// key's old bucket waits for its own lease.
	if l := lease("widget:visitor:new", now); l.Granted != 0 || l.Used != 5 {
		t.Fatalf("the recent key after a prune: %+v", l)
	}
	if n, err := db.Orgs.PruneRates(ctx, "key-", time.Minute, now); err != nil || n != 1 {
		t.Fatalf("the API key's old bucket: %d, %v", n, err)
	}
}
