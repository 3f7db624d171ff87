package orgstore

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"time"
)

// RateBuckets is how many buckets a rate-limit window is counted in.
const RateBuckets = 60

// Admission is the answer of AdmitRate.
type Admission struct {
	OK        bool
	Remaining int       // requests left in the window after this one
	Reset     time.Time // when the oldest counted bucket leaves the window
}

// AdmitRate admits one request of key when fewer than limit were admitted
// within the last window, counting in the table rate_buckets that every
// process on the database shares, so N processes apply one limit, not N.
// Requests are counted in buckets of window/RateBuckets and a request
// sees the current bucket and the RateBuckets before it, a span at least
// one window long: no window ever holds more than limit admitted requests
// across all processes, and a request is refused at most one bucket
// (a second, for a one-minute window) longer than an exact sliding log
// would refuse it. On PostgreSQL the check and the count are one call of
// the function agentd_admit (migration 0016), under an advisory lock of
// the key, never the global write lock; on SQLite one write transaction.
func (db *Orgs) AdmitRate(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (Admission, error) {
	width := window / RateBuckets
	b := now.UnixNano() / int64(width)
	first := b - RateBuckets
	h := fnv.New32a()
	h.Write([]byte(key))
	var a Admission
	if db.c.Postgres() { // the same steps in one round trip (migration 0016)
		var used int
		var oldest sql.NullInt64
		if err := db.r.QueryRowContext(ctx, "SELECT ok, used, oldest FROM agentd_admit(?, ?, ?, ?, ?)",
			key, b, first, limit, int32(h.Sum32())).Scan(&a.OK, &used, &oldest); err != nil {
			return Admission{}, fmt.Errorf("storage: rate limit: %w", err)
		}
		if !oldest.Valid {
			oldest.Int64 = b
		}
		a.Reset = time.Unix(0, (oldest.Int64+RateBuckets+1)*int64(width))
		if a.OK {
			a.Remaining = limit - used - 1
		}
		return a, nil
	}
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var used int
		var oldest, stale sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(CASE WHEN bucket >= ? THEN n ELSE 0 END), 0),
			min(CASE WHEN bucket >= ? THEN bucket END), min(bucket) FROM rate_buckets WHERE key_id = ?`,
			first, first, key).Scan(&used, &oldest, &stale); err != nil {
			return err
		}
		if stale.Valid && stale.Int64 < first {
			if _, err := tx.ExecContext(ctx, "DELETE FROM rate_buckets WHERE key_id = ? AND bucket < ?", key, first); err != nil {
				return err
			}
		}
		if !oldest.Valid {
			oldest.Int64 = b
		}
		a.Reset = time.Unix(0, (oldest.Int64+RateBuckets+1)*int64(width))
		if used >= limit {
			a.Remaining = 0
			return nil
		}
		a.OK, a.Remaining = true, limit-used-1
		_, err := tx.ExecContext(ctx, `INSERT INTO rate_buckets (key_id, bucket, n) VALUES (?, ?, 1)
			ON CONFLICT (key_id, bucket) DO UPDATE SET n = rate_buckets.n + 1`, key, b)
		return err
	})
	if err != nil {
		return Admission{}, fmt.Errorf("storage: rate limit: %w", err)
	}
	return a, nil
}
