package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Event types written by storage, in the transaction of the change each
// reports. The events feature (app/events) owns the catalogue and the
// delivery; storage only decides which transition writes which type.
const (
	EventCallQueued         = callstore.EventCallQueued
	EventCallRinging        = callstore.EventCallRinging
	EventCallAnswered       = callstore.EventCallAnswered
	EventCallRetryScheduled = callstore.EventCallRetryScheduled
	EventCallEnded          = callstore.EventCallEnded
	EventCallResult         = callstore.EventCallResult
	EventKBSourceCompleted  = "kb.source.completed"
	EventKBSourceFailed     = "kb.source.failed"
	EventListingsSynced     = "listings.sync.completed"
	EventBatchCompleted     = callstore.EventBatchCompleted
	EventPing               = hookstore.EventPing
)

// Event is one entry of the event log.
type Event = sqldb.Event

// CallSnapshot is a call as its transaction left it, with its attempts and
// the voice agent's result: the data of call events.
type CallSnapshot = callstore.CallSnapshot

// BatchSummary is a batch whose every call is final: the data of
// batch.completed.
type BatchSummary = callstore.BatchSummary

// ListingsSynced is what one listings sync wrote.
type ListingsSynced struct {
	OrgID    string
	Created  []Listing
	Updated  []Listing
	Failed   int
	Deleted  int
	Category *string // the stale scope's category when deleteStale ran
}

// EventViews turn records read inside an event's transaction into the
// event's data. The feature layer sets them once per DB (SetEventViews), so
// data is the resource as its GET shows it, built from the transaction's
// own state; a nil view falls back to {"id": ...}.
type EventViews struct {
	Call     func(CallSnapshot) any
	Source   func(Source) any
	Listings func(ListingsSynced) any
	Batch    func(BatchSummary) any
}

// SetEventViews installs the views every later event is rendered with.
func (db *DB) SetEventViews(v EventViews) { db.views.Store(&v) }

func (db *DB) eventViews() EventViews {
	if v := db.views.Load(); v != nil {
		return *v
	}
	return EventViews{}
}

// EventsCommitted returns a channel closed at the next commit, in this
// process, of a transaction that wrote events: the delivery worker and the
// event stream wake on it (other processes' events are found by polling).
func (db *DB) EventsCommitted() <-chan struct{} { return db.c.EventsCommitted() }

// pendingEvent is an event about to be inserted.
type pendingEvent struct {
	typ, subject string
	orgID        string
	data         any
	target       string
}

// insertEvents appends events to the log inside tx and returns them.
func (db *DB) insertEvents(ctx context.Context, tx *sql.Tx, evs []pendingEvent) ([]Event, error) {
	out := make([]sqldb.PendingEvent, len(evs))
	for i, e := range evs {
		out[i] = sqldb.PendingEvent{Type: e.typ, Subject: e.subject, OrgID: e.orgID, Data: e.data, Target: e.target}
	}
	return db.c.InsertEvents(ctx, tx, out)
}

// emitListingsSynced writes listings.sync.completed for a sync's writes.
func (db *DB) emitListingsSynced(ctx context.Context, tx *sql.Tx, orgID string, writes []ListingWrite, out SyncOutcome,
	stale *StaleScope, now int64) error {
	s := ListingsSynced{OrgID: orgID, Deleted: len(out.Deleted), Created: []Listing{}, Updated: []Listing{}}
	if stale != nil {
		c := stale.Category
		s.Category = &c
	}
	for i, r := range out.Results {
		if r.Err != nil {
			s.Failed++
			continue
		}
		l := writes[i].Listing
		l.Seq, l.ID, l.OrgID, l.UpdatedAt = r.Seq, r.ID, orgID, fromMS(now)
		if writes[i].Seq == 0 {
			l.CreatedAt = l.UpdatedAt
			s.Created = append(s.Created, l)
		} else {
			s.Updated = append(s.Updated, l)
		}
	}
	var data any = map[string]any{"created": len(s.Created), "updated": len(s.Updated)}
	if v := db.eventViews().Listings; v != nil {
		data = v(s)
	}
	_, err := db.insertEvents(ctx, tx, []pendingEvent{{typ: EventListingsSynced, subject: "listings:" + orgID, orgID: orgID, data: data}})
	return err
}

// EventSeq resolves an event id of the organization to its place in the
// log; an unknown id (or another organization's) is ErrNotFound.
func (db *DB) EventSeq(ctx context.Context, orgID, eventID string) (int64, error) {
	var seq int64
	err := db.readRow(ctx, "SELECT seq FROM events WHERE id = ? AND org_id = ?", eventID, orgID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("event %q: %w", eventID, ErrNotFound)
	}
	return seq, err
}

// LastEventSeq is the newest event's place in the log (0 when empty).
func (db *DB) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := db.readRow(ctx, "SELECT coalesce(max(seq), 0) FROM events").Scan(&seq)
	return seq, err
}

// EventFilter selects events of one organization after a place in the log.
type EventFilter struct {
	OrgID    string
	AfterSeq int64
	Types    []string // empty: every type
	Limit    int
}

// ListEvents returns the organization's events after AfterSeq, oldest
// first.
func (db *DB) ListEvents(ctx context.Context, f EventFilter) ([]Event, error) {
	q := "SELECT seq, id, org_id, type, subject, data, created_at FROM events WHERE org_id = ? AND seq > ?"
	args := []any{f.OrgID, f.AfterSeq}
	if len(f.Types) > 0 {
		q += " AND type IN (?" + strings.Repeat(", ?", len(f.Types)-1) + ")"
		for _, t := range f.Types {
			args = append(args, t)
		}
	}
	q += " ORDER BY seq LIMIT ?"
	rows, err := db.r.QueryContext(ctx, q, append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("storage: list events: %w", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		var data string
		var created int64
		if err := rows.Scan(&e.Seq, &e.ID, &e.OrgID, &e.Type, &e.Subject, &data, &created); err != nil {
			return nil, err
		}
		e.Data, e.CreatedAt = json.RawMessage(data), fromMS(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// PruneEvents deletes events created before cutoff with their deliveries
// and attempts, oldest first, at most limit events per call; it returns how
// many events it removed.
func (db *DB) PruneEvents(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		var hi sql.NullInt64
		// created_at grows with seq (one writer at a time): the oldest
		// events are the first rows, no index needed.
		if err := tx.QueryRowContext(ctx, `SELECT max(seq) FROM (SELECT seq, created_at FROM events ORDER BY seq LIMIT ?) e
			WHERE created_at < ?`, limit, ms(cutoff)).Scan(&hi); err != nil || !hi.Valid {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE event_seq <= ?
			AND status NOT IN ('pending', 'delivering')`, hi.Int64); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE seq <= ? AND created_at < ?
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = events.seq)`, hi.Int64, ms(cutoff))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("storage: prune events: %w", err)
	}
	return int(n), nil
}
