package callstore

import "context"

// The metrics collector runs this at scrape time. It reads the shared
// database, so it counts the work of every agentd process on the file, and
// is an index range over rows that are not finished yet: its cost follows
// the backlog, not the history.

// CallsInFlight counts the calls that have not ended, by status (initiated,
// scheduled, queued, connecting, ringing, active); statuses with no call
// are absent.
func (db *Calls) CallsInFlight(ctx context.Context) (map[string]int, error) {
	return db.c.CountBy(ctx, `SELECT status, count(*) FROM calls
		WHERE status IN ('initiated', 'scheduled', 'queued', 'connecting', 'ringing', 'active') GROUP BY status`)
}
