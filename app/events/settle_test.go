package events

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/sqldb"
)

// chanSink hands a stream's events to the test.
type chanSink struct {
	opened chan struct{}
	got    chan Event
}

func (s chanSink) Open() error                  { close(s.opened); return nil }
func (s chanSink) Send(e Event, _ []byte) error { s.got <- e; return nil }
func (s chanSink) Ping() error                  { return nil }

// On PostgreSQL an event that commits while an older transaction of
// another process is still open cannot be read until that one ends, and
// that one's commit sends no notification (it logged no event). The
// stream still delivers the event within a second of it, not at the 30 s
// safety poll.
func TestStreamFindsEventHeldBackByOlderTransaction(t *testing.T) {
	dbtest.SkipOnSQLite(t, "SQLite's single writer commits events in order")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := storetest.Handles(t, 2)
	reader, writer := h[0], h[1]
	org := storetest.Org(t, writer)
	testkit.Eventually(t, 20*time.Second, func() bool { // the listener is up: the stream sleeps 30 s when idle
		reader.Wake(storage.ChanEvents)
		return reader.IdlePoll(time.Second) > time.Second
	}, "the reader's listener never came up")
	svc := New(Deps{Webhooks: reader.Webhooks, Events: reader.Events, NewEvents: reader.Waker(storage.ChanEvents)}, nil)
	sink := chanSink{opened: make(chan struct{}), got: make(chan Event, 4)}
	go svc.Stream(ctx, org, "", nil, StreamConfig{Poll: time.Second, KeepAlive: time.Minute}, sink)
	<-sink.opened

	// An older transaction with an id, open while the event commits.
	end := storetest.Hold(t, writer, "SELECT pg_current_xact_id()")
	if err := writer.Conn().Write(ctx, func(tx *sql.Tx) error {
		_, err := writer.Conn().InsertEvents(ctx, tx, []sqldb.PendingEvent{{Type: "test.late", OrgID: org, Subject: "s", Data: map[string]int{}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Nothing must be read while the older transaction is open: 300 ms of
	// the stream's settle steps show it.
	select {
	case e := <-sink.got:
		t.Fatalf("%s read while an older transaction was open: a reader could skip what that one commits", e.Type)
	case <-time.After(300 * time.Millisecond):
	}
	end()
	ended := time.Now()
	select {
	case e := <-sink.got:
		if e.Type != "test.late" {
			t.Fatalf("got %s", e.Type)
		}
		t.Logf("delivered %s after the older transaction ended", time.Since(ended).Round(time.Millisecond))
		if d := time.Since(ended); d > 3*time.Second {
			t.Fatalf("delivered %s after the older transaction ended", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event was not delivered within 5 s of the older transaction's end")
	}
}
