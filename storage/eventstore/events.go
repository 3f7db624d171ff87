// Package eventstore is the SQL of the event log: reading it (list, stream,
// resolving an id), pruning it, and the signal of new events. Events are
// written by the store whose change they report, in the change's own
// transaction (sqldb.InsertEvents).
package eventstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Events is the event-log store over the shared connection.
type Events struct {
	c *sqldb.DB
	r *sql.DB
}

// New returns the event-log store over c.
func New(c *sqldb.DB) *Events { return &Events{c: c, r: c.Reader()} }

// EventsCommitted returns a channel closed at the next commit, in this
// process, of a transaction that wrote events: the delivery worker and the
// event stream wake on it (other processes' events are found by polling).
func (db *Events) EventsCommitted() <-chan struct{} { return db.c.EventsCommitted() }

// EventPos resolves an event id of the organization to its place in the
// log; an unknown id (or another organization's) is sqldb.ErrNotFound.
func (db *Events) EventPos(ctx context.Context, orgID, eventID string) (sqldb.Pos, error) {
	var p sqldb.Pos
	q := "SELECT " + db.c.Dialect().PosCols() + " FROM events WHERE id = ? AND org_id = ?"
	err := db.c.ReadRow(ctx, q, eventID, orgID).Scan(&p.Seq, &p.Xid)
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("event %q: %w", eventID, sqldb.ErrNotFound)
	}
	return p, err
}

// LastEventPos is where a reader starting now begins: after the newest
// event on SQLite. On PostgreSQL it is the log's horizon (see sqldb.Pos):
// events of transactions still running then, or committed after an older
// one still running, come after it, so none is lost.
func (db *Events) LastEventPos(ctx context.Context) (sqldb.Pos, error) {
	var p sqldb.Pos
	err := db.c.ReadRow(ctx, db.c.Dialect().LogEnd()).Scan(&p.Seq, &p.Xid)
	return p, err
}

// EventFilter selects events of one organization after a place in the log.
type EventFilter struct {
	OrgID string
	After sqldb.Pos
	Types []string // empty: every type
	Limit int
}

// ListEvents returns the organization's events after f.After in log order
// (on PostgreSQL only those whose transaction has ended: see sqldb.Pos).
func (db *Events) ListEvents(ctx context.Context, f EventFilter) ([]sqldb.Event, error) {
	d := db.c.Dialect()
	after, afterArgs, order := d.AfterPos(f.After)
	q := "SELECT " + d.PosCols() + ", id, org_id, type, subject, data, data_version, created_at FROM events WHERE org_id = ? AND " + after
	args := append([]any{f.OrgID}, afterArgs...)
	if len(f.Types) > 0 {
		q += " AND type IN (?" + strings.Repeat(", ?", len(f.Types)-1) + ")"
		for _, t := range f.Types {
			args = append(args, t)
		}
	}
	rows, err := db.r.QueryContext(ctx, q+" ORDER BY "+order+" LIMIT ?", append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("storage: list events: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (sqldb.Event, error) {
		var e sqldb.Event
		var data string
		var created int64
		err := sc.Scan(&e.Seq, &e.Xid, &e.ID, &e.OrgID, &e.Type, &e.Subject, &data, &e.Version, &created)
		e.Data, e.CreatedAt = json.RawMessage(data), sqldb.FromMS(created)
		return e, err
	})
}

// PruneEvents deletes events created before cutoff with their deliveries
// and attempts, oldest first, at most limit events per call; it returns how
// many events it removed.
func (db *Events) PruneEvents(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	var n int64
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var hi sql.NullInt64
		// created_at grows with seq (one writer at a time): the oldest
		// events are the first rows, no index needed.
		if err := tx.QueryRowContext(ctx, `SELECT max(seq) FROM (SELECT seq, created_at FROM events ORDER BY seq LIMIT ?) e
			WHERE created_at < ?`, limit, sqldb.MS(cutoff)).Scan(&hi); err != nil || !hi.Valid {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE event_seq <= ?
			AND status NOT IN ('pending', 'delivering')`, hi.Int64); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE seq <= ? AND created_at < ?
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = events.seq)`, hi.Int64, sqldb.MS(cutoff))
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
