package eventstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Three handles on one PostgreSQL database (as three processes) write
// events concurrently, some transactions held open on purpose so they
// commit after ones that took a later seq; three readers following the
// log page by page see every event exactly once, all in the same order,
// and the webhook fan-out, run from two handles at once, owes every event
// exactly one delivery. Reading by seq alone would skip the late commits.
func TestEventLogOrderWithConcurrentWriters(t *testing.T) {
	dbtest.SkipOnSQLite(t, "SQLite's single writer commits events in seq order")
	ctx := context.Background()
	dbs := storetest.Handles(t, 3)
	org := storetest.Org(t, dbs[0])
	ep, err := dbs[0].Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.com/hook",
		Events: []string{"*"}, Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}

	const writers, perTx = 4, 60            // writers per handle, transactions per writer
	total := len(dbs) * writers * perTx * 2 // two events per transaction
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for h, db := range dbs {
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perTx {
					hold := time.Duration(rand.IntN(3)) * time.Millisecond
					if i%15 == 7 {
						hold = 150 * time.Millisecond // commits long after later seqs
					}
					err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
						for k := range 2 {
							if _, err := db.Conn().InsertEvents(ctx, tx, []sqldb.PendingEvent{{Type: "test.order", OrgID: org,
								Subject: fmt.Sprintf("h%d-w%d-t%d-e%d", h, w, i, k), Data: map[string]int{"k": k}}}); err != nil {
								return err
							}
							time.Sleep(hold / 2) // a transaction held open: the out-of-order commits are the test's input
						}
						return nil
					})
					if err != nil {
						errc <- err
						return
					}
				}
			}()
		}
	}

	// Readers follow the log while it is written.
	seen := make([][]sqldb.Event, len(dbs))
	var rg sync.WaitGroup
	deadline := time.Now().Add(60 * time.Second)
	for r, db := range dbs {
		rg.Add(1)
		go func() {
			defer rg.Done()
			var pos sqldb.Pos
			for len(seen[r]) < total && time.Now().Before(deadline) {
				evs, err := db.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: org, After: pos, Limit: 7 + r})
				if err != nil {
					errc <- err
					return
				}
				for _, e := range evs {
					seen[r] = append(seen[r], e)
					pos = e.Pos()
				}
				if len(evs) == 0 {
					time.Sleep(2 * time.Millisecond) // a reader polling the log, as the stream does: part of the workload
				}
			}
		}()
	}
	// The fan-out runs from two handles at once while the log grows.
	stop := make(chan struct{})
	var fg sync.WaitGroup
	for _, db := range dbs[1:] {
		fg.Add(1)
		go func() {
			defer fg.Done()
			for {
				if _, err := db.Webhooks.FanOutEvents(ctx); err != nil {
					errc <- err
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(3 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	rg.Wait()
	close(stop)
	fg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}

	late := 0 // events read after one with a higher seq: commits out of seq order
	for r := range seen {
		if len(seen[r]) != total {
			t.Fatalf("reader %d saw %d events, want %d", r, len(seen[r]), total)
		}
		subjects := map[string]bool{}
		for i, e := range seen[r] {
			if subjects[e.Subject] {
				t.Fatalf("reader %d saw %s twice", r, e.Subject)
			}
			subjects[e.Subject] = true
			if r == 0 && i > 0 && e.Seq < seen[r][i-1].Seq {
				late++
			}
			if e.ID != seen[0][i].ID {
				t.Fatalf("reader %d's event %d is %s, reader 0's %s: orders differ", r, i, e.Subject, seen[0][i].Subject)
			}
		}
	}
	if late == 0 {
		t.Fatal("every event committed in seq order: the test did not make any commit late")
	}
	t.Logf("%d events, %d read after a higher seq", total, late)

	// The fan-out catches up and owes each event one delivery.
	for {
		n, err := dbs[0].Webhooks.FanOutEvents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	ds, err := dbs[0].Webhooks.ListDeliveries(ctx, hookstore.DeliveryFilter{OrgID: org, EndpointID: ep.ID, Limit: 2 * total})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(ds))
	for _, d := range ds {
		ids = append(ids, d.EventID)
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) != total || len(ds) != total {
		t.Fatalf("%d deliveries for %d distinct events, want %d each", len(ds), len(slices.Compact(ids)), total)
	}
}
