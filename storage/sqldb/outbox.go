package sqldb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Event is one entry of the event log (the transactional outbox): written
// in the transaction of the change it reports, delivered after commit.
type Event struct {
	Seq       int64 // the log's order; cursors resolve to it
	ID        string
	OrgID     string
	Type      string
	Subject   string          // the resource: call:<id>, kb_source:<id>, ...
	Data      json.RawMessage // what the change recorded (see Version)
	Version   int             // 0: Data is the public body; n > 0: snapshot format n of Type, rendered on read
	CreatedAt time.Time
}

// PendingEvent is an event about to be inserted.
type PendingEvent struct {
	Type, Subject string
	OrgID         string
	Data          any    // encoded to JSON as the API does
	Version       int    // Data's snapshot format (0: Data is the public body)
	Target        string // one webhook endpoint only ("" for every subscriber)
}

// InsertEvents appends events to the log inside tx and returns them; Write
// wakes EventsCommitted's waiters once tx commits.
func (db *DB) InsertEvents(ctx context.Context, tx *sql.Tx, evs []PendingEvent) ([]Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	now := time.Now().UTC()
	out := make([]Event, 0, len(evs))
	const row = "(?, ?, ?, ?, ?, ?, ?, ?)"
	const chunk = 500
	for lo := 0; lo < len(evs); lo += chunk {
		part := evs[lo:min(lo+chunk, len(evs))]
		args := make([]any, 0, 8*len(part))
		for _, e := range part {
			data, err := marshalData(e.Data)
			if err != nil {
				return nil, fmt.Errorf("storage: render %s event: %w", e.Type, err)
			}
			ev := Event{ID: uuid.NewString(), OrgID: e.OrgID, Type: e.Type, Subject: e.Subject, Data: data, Version: e.Version, CreatedAt: now}
			out = append(out, ev)
			args = append(args, ev.ID, ev.OrgID, ev.Type, ev.Subject, string(data), e.Version, NullStr(e.Target), MS(now))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, org_id, type, subject, data, data_version, target_endpoint, created_at)
			VALUES `+row+strings.Repeat(", "+row, len(part)-1), args...); err != nil {
			return nil, fmt.Errorf("storage: insert events: %w", err)
		}
	}
	db.Notify(tx, ChanEvents)
	return out, nil
}

// EventsCommitted returns a channel closed at the next commit, in this
// process, of a transaction that wrote events: the delivery worker fans
// out its own process's events on it (each process does its own, and the
// deliveries' NOTIFY wakes the others). Event streams follow every
// process's events: Wake(ChanEvents).
func (db *DB) EventsCommitted() <-chan struct{} { return db.lis.WaitLocal(ChanEvents) }

// marshalData encodes event data like the API does (no HTML escaping).
func marshalData(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// broadcast is a wake-up for any number of waiters.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

func (b *broadcast) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
