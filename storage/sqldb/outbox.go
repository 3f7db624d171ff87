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
	Seq       int64  // the log's order on SQLite; cursors resolve to it (see Pos)
	Xid       uint64 // PostgreSQL: the writing transaction's id (0 on SQLite)
	ID        string
	OrgID     string
	Type      string
	Subject   string          // the resource: call:<id>, kb_source:<id>, ...
	Data      json.RawMessage // what the change recorded (see Version)
	Version   int             // 0: Data is the public body; n > 0: snapshot format n of Type, rendered on read
	CreatedAt time.Time
}

// Pos is a place in the event log. On SQLite, whose single writer commits
// events in seq order, the log's order is Seq (Xid is 0). On PostgreSQL,
// where writes run concurrently and a transaction may commit after one that
// took a later seq, the order is (Xid, Seq): readers read only events
// whose transaction is older than every running one (xid below LogHorizon),
// a prefix of that order that no later commit extends, so a cursor never
// passes an event that commits late.
type Pos struct {
	Xid uint64
	Seq int64
}

// Pos is the event's place in the log.
func (e Event) Pos() Pos { return Pos{Xid: e.Xid, Seq: e.Seq} }

// LogHorizon is PostgreSQL's bound of the readable log in a query: every
// transaction with a lower id has ended (so its events, if it committed,
// are in the query's snapshot) and every transaction still to commit has
// an id at or above it. It is the lowest id the snapshot saw running,
// leaving out transactions that write no events here: those of other
// databases of the cluster and of background processes such as
// autovacuum (its ANALYZE holds an id, and held the log back in CI), as
// pg_stat_activity shows them; one that has ended since (no longer shown)
// counts only if it wrote events here (agentd_log_holds, migration 0032).
// Else the snapshot's xmax. A long-running write transaction on this
// database holds the log back while it runs. A bound read earlier stays
// valid later: ids are never reused, so every transaction below it has
// still ended and every new one is above it.
const LogHorizon = `(SELECT coalesce(min(x), pg_snapshot_xmax(pg_current_snapshot())) FROM pg_snapshot_xip(pg_current_snapshot()) x
	WHERE EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.backend_xid = x::xid
		AND a.datname = current_database() AND a.backend_type = 'client backend')
	OR (NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.backend_xid = x::xid) AND agentd_log_holds(x)))`

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

// PosCols reads an event's place in the log (Pos's Seq, Xid) from the
// events table's columns.
func (d Dialect) PosCols() string {
	return PerDialect[string]{SQLite: "seq, 0", Postgres: "seq, xid::text::bigint"}.For(d)
}

// LogEnd reads the place (Seq, Xid) a reader starting now begins at: after
// the newest event on SQLite, the log's horizon on PostgreSQL (events of
// transactions still running then come after it).
func (d Dialect) LogEnd() string {
	return PerDialect[string]{SQLite: "SELECT coalesce(max(seq), 0), 0 FROM events", Postgres: "SELECT 0, " + LogHorizon + "::text::bigint"}.For(d)
}

// AfterPos is the condition on the events table for the events after p
// that a reader may read now, with its args, and the log's order.
func (d Dialect) AfterPos(p Pos) (cond string, args []any, order string) {
	if d == Postgres {
		return "(xid, seq) > (?::bigint::text::xid8, ?) AND xid < " + LogHorizon, []any{int64(p.Xid), p.Seq}, "xid, seq"
	}
	return "seq > ?", []any{p.Seq}, "seq"
}
