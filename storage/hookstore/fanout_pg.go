package hookstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// cursorNow names an endpoint's cursor columns: on PostgreSQL the pair
// (cursor_xid, cursor), a place in the log ordered by (xid, seq) (see
// sqldb.Pos), with the snapshot it was set in (migration 0030).
func (db *Webhooks) cursorNow() string {
	return sqldb.PerDialect[string]{SQLite: "cursor", Postgres: "cursor_xid, cursor, since_snapshot, since_xid"}.For(db.c.Dialect())
}

// cursorNowValue is the value of cursorNow for an endpoint that receives
// the events logged from now on: after the newest event on SQLite; on
// PostgreSQL the log's horizon, before every event whose transaction was
// still running, and the snapshot of now: the events of transactions it
// shows committed, ahead of the horizon behind an older running one, came
// before the endpoint too, and the fan-out skips them.
func (db *Webhooks) cursorNowValue() string {
	return sqldb.PerDialect[string]{
		SQLite:   "(SELECT coalesce(max(seq), 0) FROM events)",
		Postgres: sqldb.LogHorizon + ", 0, pg_current_snapshot(), pg_current_xact_id()",
	}.For(db.c.Dialect())
}

// fanOutPG is FanOutEvents on PostgreSQL. Writes commit concurrently there,
// so an endpoint's cursor is a place in the (xid, seq) order and moves only
// over events whose transaction has ended (xid below the horizon of the
// fan-out's own snapshot): an event that commits late is still ahead of
// every cursor. Each endpoint moves at most fanOutStep events per call.
func (db *Webhooks) fanOutPG(ctx context.Context) (int, error) {
	var behind bool
	var horizon string
	// LATERAL ... LIMIT 1: one probe of events_org_xid per endpoint, where
	// a semi-join may scan the whole log. The horizon is read here, at READ
	// COMMITTED, and kept for the write: it stays valid (see LogHorizon),
	// and the write's SERIALIZABLE snapshot could not tell whether a
	// transaction that ended meanwhile wrote events.
	if err := db.c.ReadRow(ctx, `WITH h AS MATERIALIZED (SELECT `+sqldb.LogHorizon+` AS h)
		SELECT EXISTS (SELECT 1 FROM webhook_endpoints w CROSS JOIN LATERAL (
		SELECT 1 FROM events ev WHERE ev.org_id = w.org_id AND (ev.xid, ev.seq) > (w.cursor_xid, w.cursor)
			AND ev.xid < (SELECT h FROM h) ORDER BY ev.xid, ev.seq LIMIT 1) e WHERE w.enabled = 1),
		(SELECT h FROM h)::text`).Scan(&behind, &horizon); err != nil {
		return 0, fmt.Errorf("storage: fan-out check: %w", err)
	}
	if !behind {
		return 0, nil
	}
	var n int64
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		now := sqldb.MS(time.Now())
		return tx.QueryRowContext(ctx, `WITH ev AS (
				SELECT w.id AS endpoint_id, w.org_id, w.events AS wants, e.seq, e.xid, e.id, e.type, e.subject, e.target_endpoint,
					w.since_snapshot IS NOT NULL AND e.xid <> w.since_xid AND pg_visible_in_snapshot(e.xid, w.since_snapshot) AS before
				FROM webhook_endpoints w CROSS JOIN LATERAL (
					SELECT seq, xid, id, type, subject, target_endpoint FROM events
					WHERE org_id = w.org_id AND (xid, seq) > (w.cursor_xid, w.cursor) AND xid < ?::text::xid8
					ORDER BY xid, seq LIMIT ?) e
				WHERE w.enabled = 1),
			ins AS (
				INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_seq, event_id,
					event_type, order_key, status, next_attempt_at, created_at, updated_at)
				SELECT gen_random_uuid()::text, org_id, endpoint_id, seq, id, type, subject, 'pending', ?, ?, ?
				FROM ev WHERE target_endpoint IS NULL AND NOT before
					AND ((wants = '["*"]' AND ev.type <> 'call.transcript') OR EXISTS (SELECT 1 FROM json_each(wants) j WHERE j.value = ev.type))
				ORDER BY endpoint_id, xid, seq
				ON CONFLICT DO NOTHING RETURNING 1),
			moved AS (
				UPDATE webhook_endpoints w SET cursor_xid = m.xid, cursor = m.seq
				FROM (SELECT DISTINCT ON (endpoint_id) endpoint_id, xid, seq FROM ev ORDER BY endpoint_id, xid DESC, seq DESC) m
				WHERE w.id = m.endpoint_id RETURNING 1)
			SELECT (SELECT count(*) FROM ins) + 0 * (SELECT count(*) FROM moved)`, horizon, fanOutStep, now, now, now).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("storage: fan out events: %w", err)
	}
	return int(n), nil
}
