package kbstore

import "context"

// The metrics collector runs this at scrape time. It reads the shared
// database, so it counts the work of every agentd process on the file, and
// is an index range over rows that are not finished yet: its cost follows
// the backlog, not the history.

// KBBacklogByStatus counts the knowledge sources waiting for or in processing, by
// status (pending, processing).
func (db *Knowledge) KBBacklogByStatus(ctx context.Context) (map[string]int, error) {
	return db.c.CountBy(ctx, `SELECT status, count(*) FROM kb_sources
		WHERE status IN ('pending', 'processing') GROUP BY status`)
}
