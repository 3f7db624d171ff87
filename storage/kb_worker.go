package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// KBJob is a source claimed for processing at one revision.
type KBJob struct {
	SourceID     string
	CollectionID string
	Title        string
	Content      string
	Revision     int64
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

// ClaimKBSource takes the oldest queued source (pending, or processing
// without a live lease) for owner until now+lease. Claims live in the
// database, so workers of several processes never take the same source.
// Nothing to do is ErrNotFound.
func (db *DB) ClaimKBSource(ctx context.Context, owner string, lease time.Duration) (KBJob, error) {
	var j KBJob
	now := time.Now()
	err := db.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `UPDATE kb_sources SET status = 'processing', lease_owner = ?, lease_until = ?
			WHERE id = (SELECT id FROM kb_sources WHERE status IN ('pending', 'processing')
				AND (lease_until IS NULL OR lease_until < ?) ORDER BY queued_at, rowid LIMIT 1)
			RETURNING id, collection_id, title, content, revision`, owner, ms(now.Add(lease)), ms(now)).
			Scan(&j.SourceID, &j.CollectionID, &j.Title, &j.Content, &j.Revision)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("no queued source: %w", ErrNotFound)
	}
	return j, err
}

// RenewKBLease extends owner's claim on the job while it still holds it.
func (db *DB) RenewKBLease(ctx context.Context, j KBJob, owner string, lease time.Duration) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE kb_sources SET lease_until = ? WHERE id = ? AND revision = ? AND lease_owner = ?",
			ms(time.Now().Add(lease)), j.SourceID, j.Revision, owner)
		return err
	})
}

// checkJob verifies inside tx that the job is still current: the source
// exists, has the job's revision (a newer write wins) and owner holds it.
func checkJob(ctx context.Context, tx *sql.Tx, j KBJob, owner string) error {
	var rev int64
	var lo sql.NullString
	err := tx.QueryRowContext(ctx, "SELECT revision, lease_owner FROM kb_sources WHERE id = ?", j.SourceID).Scan(&rev, &lo)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("source %s was deleted: %w", j.SourceID, ErrConflict)
	}
	if err != nil {
		return err
	}
	if rev != j.Revision || lo.String != owner {
		return fmt.Errorf("source %s changed during processing (revision %d, now %d): %w", j.SourceID, j.Revision, rev, ErrConflict)
	}
	return nil
}

// CompleteKBSource replaces the source's chunks and vectors (made by model
// m; writing them logs the chunks for the keyword index too) and marks it
// completed with its chunk count, all in one transaction. A job overtaken by a newer write, a deletion, a
// reclaim or a change of the collection's model is ErrConflict and writes
// nothing.
func (db *DB) CompleteKBSource(ctx context.Context, j KBJob, owner string, m VectorModel, chunks []KBChunk) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if err := checkJob(ctx, tx, j, owner); err != nil {
			return err
		}
		space := KBSpace(j.CollectionID)
		if err := ensureSpace(ctx, tx, space, m); err != nil {
			return err
		}
		if err := deleteSourceChunks(ctx, tx, j.CollectionID, j.SourceID); err != nil {
			return err
		}
		ins, err := tx.PrepareContext(ctx, "INSERT INTO kb_chunks (source_id, collection_id, chunk_index, heading_path, content, tokens) VALUES (?, ?, ?, ?, ?, ?)")
		if err != nil {
			return err
		}
		defer ins.Close()
		items := make([]VectorItem, 0, len(chunks))
		for _, c := range chunks {
			hp := c.HeadingPath
			if hp == nil {
				hp = []string{}
			}
			hpj, _ := json.Marshal(hp)
			res, err := ins.ExecContext(ctx, j.SourceID, j.CollectionID, c.Index, string(hpj), c.Content, c.Tokens)
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			items = append(items, VectorItem{ID: id, Vec: c.Vec})
		}
		if err := putVectors(ctx, tx, space, m.Dims, items); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'completed', chunk_count = ?, error = NULL,
			lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ?`, len(chunks), ms(time.Now()), j.SourceID); err != nil {
			return err
		}
		return db.emitSource(ctx, tx, EventKBSourceCompleted, j.SourceID)
	})
}

// FailKBSource marks the job's source failed with msg, unless the job was
// overtaken (ErrConflict).
func (db *DB) FailKBSource(ctx context.Context, j KBJob, owner, msg string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if err := checkJob(ctx, tx, j, owner); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'failed', error = ?, lease_owner = NULL, lease_until = NULL,
			updated_at = ? WHERE id = ?`, msg, ms(time.Now()), j.SourceID); err != nil {
			return err
		}
		return db.emitSource(ctx, tx, EventKBSourceFailed, j.SourceID)
	})
}

// ReleaseKBSource gives a claimed job back (pending, no lease), e.g. when
// the worker stops before finishing it.
func (db *DB) ReleaseKBSource(ctx context.Context, j KBJob, owner string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'pending', lease_owner = NULL, lease_until = NULL
			WHERE id = ? AND revision = ? AND lease_owner = ?`, j.SourceID, j.Revision, owner)
		return err
	})
}

// ResetUnfinishedKB marks pending every processing source no live lease
// holds: after a restart those are unfinished work waiting to be picked up.
func (db *DB) ResetUnfinishedKB(ctx context.Context) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'pending', lease_owner = NULL, lease_until = NULL
			WHERE status = 'processing' AND (lease_until IS NULL OR lease_until < ?)`, ms(time.Now()))
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
func (db *DB) KBBacklog(ctx context.Context, collectionID string) (int, error) {
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
func (db *DB) SyncKBModel(ctx context.Context, m VectorModel, collectionID string, force bool) (int, error) {
	var queued int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT c.id, coalesce(v.embedder, ''), coalesce(v.model, ''), coalesce(v.dims, 0)
			FROM kb_collections c LEFT JOIN vector_spaces v ON v.space = 'kb:' || c.id WHERE ? = '' OR c.id = ?`, collectionID, collectionID)
		if err != nil {
			return err
		}
		type col struct {
			id  string
			cur VectorModel
		}
		var cols []col
		for rows.Next() {
			var c col
			if err := rows.Scan(&c.id, &c.cur.Embedder, &c.cur.Model, &c.cur.Dims); err != nil {
				rows.Close()
				return err
			}
			cols = append(cols, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		now := ms(time.Now())
		for _, c := range cols {
			changed := c.cur.Dims != 0 && c.cur != m
			if !changed && !force {
				continue
			}
			if changed {
				if err := resetSpace(ctx, tx, KBSpace(c.id), m); err != nil {
					return err
				}
			}
			res, err := tx.ExecContext(ctx, `UPDATE kb_sources SET status = 'pending', revision = revision + 1, queued_at = ?,
				lease_owner = NULL, lease_until = NULL WHERE collection_id = ?`, now, c.id)
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
