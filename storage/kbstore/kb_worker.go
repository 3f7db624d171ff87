package kbstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/vectorstore"
)

// KBJob is a source claimed for processing at one revision.
type KBJob struct {
	SourceID     string
	CollectionID string
	Title        string
	Content      string
	Revision     int64
	// Retries is how many automatic retries this source has had since its
	// content last changed (see FailKBSources).
	Retries int
	// HadChunks says the source has chunks from an earlier processing,
	// which completing it replaces.
	HadChunks bool
}

// KBChunk is one processed chunk ready to store: its text, heading path
// and vector.
type KBChunk struct {
	Index       int
	Content     string
	HeadingPath []string
	Tokens      int
	// Body is not stored: the keyword index reads title, headings and
	// content from the chunk row. Kept until its callers stop setting it.
	Body string
	Vec  []float32
}

// claimQueries are the claim's hot statements, prepared once on the writer.
var claimQueries = [...]string{
	// Failed sources whose retry is due go back to the queue.
	`UPDATE kb_sources SET status = 'pending', retry_at = NULL, queued_at = ?, lease_owner = NULL, lease_until = NULL
		WHERE retry_at <= ? AND status = 'failed'`,
	`SELECT id, file_size FROM kb_sources WHERE status IN ('pending', 'processing')
		AND (lease_until IS NULL OR lease_until < ?) ORDER BY queued_at, rowid LIMIT ?`,
	"SELECT min(retry_at) FROM kb_sources WHERE retry_at IS NOT NULL",
}

// The reads of an idle worker's look for work that cross the table follow
// an index in its order, so that any plan stops at the first row: every
// process runs them at every knowledge wake-up. EXISTS over the retries
// due, and one min() over an OR of the next retry and the next lease's end
// (a source being processed: its lease's end; any other: its retry time),
// read every source under a plan made while the table was small
// (PostgreSQL keeps a prepared statement's generic plan until the table is
// next analyzed).
const (
	firstRetrySQL = `SELECT retry_at FROM kb_sources WHERE retry_at IS NOT NULL AND status = 'failed' ORDER BY retry_at LIMIT 1`
	nextLeaseSQL  = `SELECT (SELECT lease_until FROM kb_sources WHERE status = 'processing' AND lease_until IS NOT NULL
		ORDER BY lease_until LIMIT 1) AS t`
	nextRetrySQL = `SELECT (SELECT retry_at FROM kb_sources WHERE retry_at IS NOT NULL AND status <> 'processing'
		ORDER BY retry_at LIMIT 1)`
)

// ClaimKBSources takes the oldest queued sources (pending, or processing
// without a live lease; failed ones whose retry is due are queued first)
// for owner until now+lease: at most max of them, and no more once their
// content reaches maxBytes (0: no limit; the first is always taken).
// Claims live in the database, so workers of several processes never take
// the same source. nextRetry is when the earliest retry still scheduled is
// due (zero when none is), so an idle worker knows when to look again.
func (db *Knowledge) ClaimKBSources(ctx context.Context, owner string, lease time.Duration, max, maxBytes int) (jobs []KBJob, nextRetry time.Time, err error) {
	now := time.Now()
	// A read first: an idle worker's claim finds nothing, and a write
	// transaction per poll of every process is what idle must not cost.
	// With nothing to take, nextRetry is also when a source another worker
	// holds may be taken over (its lease runs out, if it died): notified
	// wake-ups do not cover that.
	var work bool
	var next sql.NullInt64
	if err := db.c.ReadRowFresh(ctx, `SELECT EXISTS (SELECT 1 FROM kb_sources WHERE status IN ('pending', 'processing')
		AND (lease_until IS NULL OR lease_until < ?)) OR coalesce((`+firstRetrySQL+`) <= ?, false),
		(SELECT min(t) FROM (`+nextLeaseSQL+` UNION ALL `+nextRetrySQL+`) n)`, sqldb.MS(now), sqldb.MS(now)).Scan(&work, &next); err != nil {
		return nil, time.Time{}, err
	}
	if !work {
		if next.Valid {
			nextRetry = time.UnixMilli(next.Int64)
		}
		return nil, nextRetry, nil
	}
	st, err := db.c.WriterStmts(ctx, claimQueries[:]...)
	if err != nil {
		return nil, time.Time{}, err
	}
	now = time.Now()
	// READ COMMITTED on PostgreSQL (sqldb.WriteClaim): the UPDATE repeats
	// the claimable condition, which PostgreSQL re-checks on a row another
	// claim took meanwhile, and only the rows it took become jobs.
	err = db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		jobs = jobs[:0]
		b := bindStmts(ctx, tx, st)
		if _, err := b[0].ExecContext(ctx, sqldb.MS(now), sqldb.MS(now)); err != nil {
			return err
		}
		var next sql.NullInt64
		if err := b[2].QueryRowContext(ctx).Scan(&next); err != nil {
			return err
		}
		nextRetry = time.Time{}
		if next.Valid {
			nextRetry = time.UnixMilli(next.Int64)
		}
		rows, err := b[1].QueryContext(ctx, sqldb.MS(now), max)
		if err != nil {
			return err
		}
		var ids []any
		size := 0
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return err
			}
			if len(ids) > 0 && maxBytes > 0 && size+n > maxBytes {
				break
			}
			ids = append(ids, id)
			size += n
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		rows, err = tx.QueryContext(ctx, `UPDATE kb_sources SET status = 'processing', lease_owner = ?, lease_until = ?
			WHERE status IN ('pending', 'processing') AND (lease_until IS NULL OR lease_until < ?)
			AND id IN (`+sqldb.Placeholders("?", len(ids))+`) RETURNING id, collection_id, title, content, revision, retries, chunk_count > 0`,
			append([]any{owner, sqldb.MS(now.Add(lease)), sqldb.MS(now)}, ids...)...)
		if err != nil {
			return err
		}
		byID := make(map[string]KBJob, len(ids))
		if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
			var j KBJob
			err := sc.Scan(&j.SourceID, &j.CollectionID, &j.Title, &j.Content, &j.Revision, &j.Retries, &j.HadChunks)
			byID[j.SourceID] = j
			return err
		}); err != nil {
			return err
		}
		for _, id := range ids { // queue order (RETURNING's order is unspecified)
			if j, ok := byID[id.(string)]; ok {
				jobs = append(jobs, j)
			}
		}
		return nil
	})
	return jobs, nextRetry, err
}

// RenewKBLeases extends owner's claims on the jobs it still holds.
func (db *Knowledge) RenewKBLeases(ctx context.Context, jobs []KBJob, owner string, lease time.Duration) error {
	args := []any{sqldb.MS(time.Now().Add(lease)), owner}
	for _, j := range jobs {
		args = append(args, j.SourceID)
	}
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE kb_sources SET lease_until = ? WHERE lease_owner = ? AND id IN ("+sqldb.Placeholders("?", len(jobs))+")", args...)
		return err
	})
}

// ResetUnfinishedKB marks pending every processing source no live lease
// holds: after a restart those are unfinished work waiting to be picked up.
func (db *Knowledge) ResetUnfinishedKB(ctx context.Context) (int, error) {
	var n int64
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'pending', lease_owner = NULL, lease_until = NULL
			WHERE status = 'processing' AND (lease_until IS NULL OR lease_until < ?)`, sqldb.MS(time.Now()))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// RequeueFailedKB queues again every failed source (of one collection, or
// all when collectionID is ""), with its retry count reset, and returns how
// many: `agentd reindex --failed`.
func (db *Knowledge) RequeueFailedKB(ctx context.Context, collectionID string) (int, error) {
	var n int64
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'pending', revision = revision + 1, queued_at = ?,
			retries = 0, retry_at = NULL, lease_owner = NULL, lease_until = NULL
			WHERE status = 'failed' AND (? = '' OR collection_id = ?)`, sqldb.MS(time.Now()), collectionID, collectionID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// KBBacklog counts sources waiting for or in processing (all collections
// when collectionID is "").
func (db *Knowledge) KBBacklog(ctx context.Context, collectionID string) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM kb_sources WHERE status IN ('pending', 'processing')
		AND (? = '' OR collection_id = ?)`, collectionID, collectionID).Scan(&n)
	return n, err
}

// SyncKBModel makes model m the embedder of every collection's index (or
// of one collection): a collection whose vectors were made by another model
// loses them and all its sources go back to pending for re-embedding. With
// force every source of the matched collections is queued again even when
// the model is unchanged. It returns how many sources were queued.
func (db *Knowledge) SyncKBModel(ctx context.Context, m vectorstore.VectorModel, collectionID string, force bool) (int, error) {
	var queued int64
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		queued = 0 // fn runs again after a serialization failure
		rows, err := tx.QueryContext(ctx, `SELECT c.id, coalesce(v.embedder, ''), coalesce(v.model, ''), coalesce(v.dims, 0)
			FROM kb_collections c LEFT JOIN vector_spaces v ON v.space = 'kb:' || c.id WHERE ? = '' OR c.id = ?`, collectionID, collectionID)
		if err != nil {
			return err
		}
		type col struct {
			id  string
			cur vectorstore.VectorModel
		}
		cols, err := sqldb.Collect(rows, func(sc sqldb.Scanner) (c col, err error) {
			err = sc.Scan(&c.id, &c.cur.Embedder, &c.cur.Model, &c.cur.Dims)
			return c, err
		})
		if err != nil {
			return err
		}
		now := sqldb.MS(time.Now())
		for _, c := range cols {
			changed := c.cur.Dims != 0 && c.cur != m
			if !changed && !force {
				continue
			}
			if changed {
				if err := vectorstore.ResetSpace(ctx, tx, KBSpace(c.id), m); err != nil {
					return err
				}
			}
			res, err := tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'pending', revision = revision + 1, queued_at = ?,
				retries = 0, retry_at = NULL, lease_owner = NULL, lease_until = NULL WHERE collection_id = ?`, now, c.id)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			queued += n
		}
		return nil
	})
	return int(queued), err
}
