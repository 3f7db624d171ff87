package storage

import (
	"context"
	"fmt"
)

// Queries the metrics collector runs at scrape time. They read the shared
// database, so they count the work of every agentd process on the file,
// and each is an index range over rows that are not finished yet: their
// cost follows the backlog, not the history.

// CallsInFlight counts the calls that have not ended, by status (initiated,
// scheduled, queued, connecting, ringing, active); statuses with no call
// are absent.
func (db *DB) CallsInFlight(ctx context.Context) (map[string]int, error) {
	return db.countBy(ctx, `SELECT status, count(*) FROM calls
		WHERE status IN ('initiated', 'scheduled', 'queued', 'connecting', 'ringing', 'active') GROUP BY status`)
}

// KBBacklogByStatus counts the knowledge sources waiting for or in processing, by
// status (pending, processing).
func (db *DB) KBBacklogByStatus(ctx context.Context) (map[string]int, error) {
	return db.countBy(ctx, `SELECT status, count(*) FROM kb_sources
		WHERE status IN ('pending', 'processing') GROUP BY status`)
}

func (db *DB) countBy(ctx context.Context, query string) (map[string]int, error) {
	rows, err := db.r.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("storage: metrics: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("storage: metrics: %w", err)
		}
		out[k] = n
	}
	return out, rows.Err()
}
