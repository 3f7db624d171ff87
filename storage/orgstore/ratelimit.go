package orgstore

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// RateBuckets is how many buckets a rate-limit window is counted in.
const RateBuckets = 60

// Lease is the answer of LeaseRate: a block of a key's budget that the
// caller may admit from until its bucket ends.
type Lease struct {
	Granted int       // admissions granted (0: the window is full)
	Used    int       // admissions counted in the window before this grant
	Bucket  int64     // the bucket the grant is counted in
	End     time.Time // when that bucket ends: the block is void from then
	Reset   time.Time // when the oldest counted bucket leaves the window
}

// Unused is what a caller hands back of an earlier block: N admissions
// counted in Bucket that it never made.
type Unused struct {
	Bucket int64
	N      int
}

// LeaseRate grants up to want admissions of key, counted in the table
// rate_buckets that every process on the database shares, when the window
// still has them, and first takes back unused, the rest of the caller's
// previous block. Grants are counted in buckets of window/RateBuckets and
// a grant sees the current bucket and the RateBuckets before it, a span at
// least one window long; a caller admits from a block only inside the
// bucket it is counted in. So, with the processes' clocks agreeing to
// within a bucket, no window holds more admissions than limit across all
// processes; a clock a bucket off lets a process exceed it by at most its
// own block. On PostgreSQL one call of agentd_lease (migration 0027) under
// an advisory lock of the key, never the global write lock; on SQLite one
// write transaction.
func (db *Orgs) LeaseRate(ctx context.Context, key string, limit, want int, window time.Duration, now time.Time, unused Unused) (Lease, error) {
	width := window / RateBuckets
	b := now.UnixNano() / int64(width)
	first := b - RateBuckets
	l := Lease{Bucket: b, End: time.Unix(0, (b+1)*int64(width))}
	var oldest sql.NullInt64
	lease := sqldb.PerDialect[leaseFunc]{SQLite: db.leaseWrite, Postgres: db.leaseCall}.For(db.c.Dialect())
	if err := lease(ctx, key, b, first, limit, want, unused, &l, &oldest); err != nil {
		return Lease{}, fmt.Errorf("storage: rate limit: %w", err)
	}
	if !oldest.Valid {
		oldest.Int64 = b
	}
	l.Reset = time.Unix(0, (oldest.Int64+RateBuckets+1)*int64(width))
	return l, nil
}

type leaseFunc func(ctx context.Context, key string, b, first int64, limit, want int, unused Unused, l *Lease, oldest *sql.NullInt64) error

// leaseCall is LeaseRate on PostgreSQL: one call of agentd_lease, which
// locks the key (its hash) rather than taking the write path.
func (db *Orgs) leaseCall(ctx context.Context, key string, b, first int64, limit, want int, unused Unused, l *Lease, oldest *sql.NullInt64) error {
	h := fnv.New32a()
	h.Write([]byte(key))
	return db.r.QueryRowContext(ctx, "SELECT granted, used, oldest FROM agentd_lease(?, ?, ?, ?, ?, ?, ?, ?)",
		key, b, first, limit, want, int32(h.Sum32()), unused.Bucket, unused.N).Scan(&l.Granted, &l.Used, oldest)
}

// leaseWrite is LeaseRate on SQLite: leaseSQLite in a write transaction.
func (db *Orgs) leaseWrite(ctx context.Context, key string, b, first int64, limit, want int, unused Unused, l *Lease, oldest *sql.NullInt64) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		return leaseSQLite(ctx, tx, key, b, first, limit, want, unused, l, oldest)
	})
}

// leaseSQLite is agentd_lease's steps in a SQLite write transaction.
func leaseSQLite(ctx context.Context, tx *sql.Tx, key string, b, first int64, limit, want int, unused Unused, l *Lease, oldest *sql.NullInt64) error {
	if unused.N > 0 {
		if _, err := tx.ExecContext(ctx, "UPDATE rate_buckets SET n = max(n - ?, 0) WHERE key_id = ? AND bucket = ?",
			unused.N, key, unused.Bucket); err != nil {
			return err
		}
	}
	var stale sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(CASE WHEN bucket >= ? THEN n ELSE 0 END), 0),
		min(CASE WHEN bucket >= ? THEN bucket END), min(bucket) FROM rate_buckets WHERE key_id = ?`,
		first, first, key).Scan(&l.Used, oldest, &stale); err != nil {
		return err
	}
	if stale.Valid && stale.Int64 < first {
		if _, err := tx.ExecContext(ctx, "DELETE FROM rate_buckets WHERE key_id = ? AND bucket < ?", key, first); err != nil {
			return err
		}
	}
	l.Granted = min(want, limit-l.Used)
	if l.Granted <= 0 {
		l.Granted = 0
		return nil
	}
	if !oldest.Valid {
		*oldest = sql.NullInt64{Int64: b, Valid: true}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO rate_buckets (key_id, bucket, n) VALUES (?, ?, ?)
		ON CONFLICT (key_id, bucket) DO UPDATE SET n = rate_buckets.n + excluded.n`, key, b, l.Granted)
	return err
}

// PruneBatch is the most rows one PruneRates call deletes.
const PruneBatch = 10000

// PruneRates deletes the buckets of the keys under prefix (ASCII) that are two
// windows old: no lease counts them any longer, but only the key's next
// lease would delete them, and a key used for a while and never again (a
// widget visitor's) would keep them. At most PruneBatch rows a call; on
// PostgreSQL rows a lease holds are skipped, not waited for (the lease
// deletes them itself).
func (db *Orgs) PruneRates(ctx context.Context, prefix string, window time.Duration, now time.Time) (int64, error) {
	cut := now.Add(-2*window).UnixNano() / int64(window/RateBuckets)
	// A read first: every process runs this every minute, and an idle one
	// must not write (nor take the writer on SQLite) to find nothing.
	const old = `SELECT key_id, bucket FROM rate_buckets WHERE substr(key_id, 1, ?) = ? AND bucket < ?`
	var found bool
	if err := db.r.QueryRowContext(ctx, "SELECT EXISTS ("+old+")", len(prefix), prefix, cut).Scan(&found); err != nil || !found {
		if err != nil {
			err = fmt.Errorf("storage: prune rate buckets: %w", err)
		}
		return 0, err
	}
	q := `DELETE FROM rate_buckets WHERE (key_id, bucket) IN (` + old + ` LIMIT ` + strconv.Itoa(PruneBatch) +
		db.c.Dialect().SkipLocked() + ")"
	var n int64
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, len(prefix), prefix, cut)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("storage: prune rate buckets: %w", err)
	}
	return n, nil
}
