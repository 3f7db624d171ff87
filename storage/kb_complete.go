package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// KBDone is a processed job with its chunks (vectors set).
type KBDone struct {
	Job    KBJob
	Chunks []KBChunk
}

// CompleteKBSource stores one processed job (CompleteKBSources of one); a
// job overtaken by a newer write, a deletion or a reclaim is ErrConflict and
// writes nothing.
func (db *DB) CompleteKBSource(ctx context.Context, j KBJob, owner string, m VectorModel, chunks []KBChunk) error {
	n, err := db.CompleteKBSources(ctx, owner, m, []KBDone{{Job: j, Chunks: chunks}})
	if err == nil && n == 0 {
		return errOvertaken(j)
	}
	return err
}

// CompleteKBSources replaces the chunks and vectors (made by model m;
// writing them logs the chunks for the keyword index too) of processed
// jobs and marks them completed with their chunk counts, all in one
// transaction of multi-row statements. A job overtaken by a newer write, a
// deletion or a reclaim is skipped and writes nothing; completed counts the
// others. A collection whose vectors another model made is ErrConflict.
func (db *DB) CompleteKBSources(ctx context.Context, owner string, m VectorModel, done []KBDone) (completed int, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		completed = 0
		if len(done) == 0 {
			return nil
		}
		// Mark the jobs still current completed, and read them back for
		// their events, in one statement.
		now := ms(time.Now())
		args := []any{now}
		for _, d := range done {
			args = append(args, d.Job.SourceID, d.Job.Revision, len(d.Chunks))
		}
		args = append(args, owner)
		rows, err := tx.QueryContext(ctx, `UPDATE kb_sources SET status = 'completed', chunk_count = v.column3, error = NULL,
			retries = 0, retry_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = ?
			FROM (VALUES `+placeholders("(?, ?, ?)", len(done))+`) AS v
			WHERE kb_sources.id = v.column1 AND kb_sources.revision = v.column2 AND kb_sources.lease_owner = ?
			RETURNING `+sourceEventCols, args...)
		if err != nil {
			return err
		}
		srcs, err := scanEventSources(rows)
		if err != nil {
			return err
		}
		var keep []KBDone
		var ids []string
		var old []KBJob
		spaces := map[string]bool{}
		for _, d := range done {
			if _, ok := srcs[d.Job.SourceID]; !ok {
				continue // overtaken
			}
			keep = append(keep, d)
			ids = append(ids, d.Job.SourceID)
			if d.Job.HadChunks {
				old = append(old, d.Job)
			}
			if s := KBSpace(d.Job.CollectionID); !spaces[s] {
				spaces[s] = true
				if err := ensureSpace(ctx, tx, s, m); err != nil {
					return err
				}
			}
		}
		if len(keep) == 0 {
			return nil
		}
		if len(old) > 0 {
			if err := deleteJobChunks(ctx, tx, old); err != nil {
				return err
			}
		}
		items, err := insertChunks(ctx, tx, keep)
		if err != nil {
			return err
		}
		for space, its := range items {
			if err := putVectors(ctx, tx, space, m.Dims, its); err != nil {
				return err
			}
		}
		completed = len(keep)
		return db.emitSourceEvents(ctx, tx, EventKBSourceCompleted, ids, srcs)
	})
	return completed, err
}

// deleteJobChunks removes the chunks (and their vectors) the jobs' sources
// had before.
func deleteJobChunks(ctx context.Context, tx *sql.Tx, jobs []KBJob) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, collection_id FROM kb_chunks WHERE source_id IN ("+placeholders("?", len(jobs))+")", jobArgs(jobs)...)
	if err != nil {
		return err
	}
	old := map[string][]int64{}
	for rows.Next() {
		var id int64
		var col string
		if err := rows.Scan(&id, &col); err != nil {
			rows.Close()
			return err
		}
		old[col] = append(old[col], id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(old) == 0 {
		return err
	}
	for col, ids := range old {
		if err := deleteVectors(ctx, tx, KBSpace(col), ids); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM kb_chunks WHERE source_id IN ("+placeholders("?", len(jobs))+")", jobArgs(jobs)...)
	return err
}

// chunkRowsPerInsert keeps a multi-row chunk insert under SQLite's limit of
// bound parameters.
const chunkRowsPerInsert = 400

// insertChunks writes the jobs' chunks with multi-row inserts and returns
// their vectors keyed by the new chunk ids, per vector space.
func insertChunks(ctx context.Context, tx *sql.Tx, done []KBDone) (map[string][]VectorItem, error) {
	type key struct {
		src string
		idx int
	}
	type row struct {
		job   KBJob
		chunk *KBChunk
	}
	var all []row
	for _, d := range done {
		for i := range d.Chunks {
			all = append(all, row{d.Job, &d.Chunks[i]})
		}
	}
	out := map[string][]VectorItem{}
	for len(all) > 0 {
		part := all[:min(len(all), chunkRowsPerInsert)]
		all = all[len(part):]
		args := make([]any, 0, 6*len(part))
		byKey := make(map[key]*row, len(part))
		for i, r := range part {
			hp := r.chunk.HeadingPath
			if hp == nil {
				hp = []string{}
			}
			hpj, _ := json.Marshal(hp)
			args = append(args, r.job.SourceID, r.job.CollectionID, r.chunk.Index, string(hpj), r.chunk.Content, r.chunk.Tokens)
			byKey[key{r.job.SourceID, r.chunk.Index}] = &part[i]
		}
		rows, err := tx.QueryContext(ctx, `INSERT INTO kb_chunks (source_id, collection_id, chunk_index, heading_path, content, tokens)
			VALUES `+placeholders("(?, ?, ?, ?, ?, ?)", len(part))+` RETURNING id, source_id, chunk_index`, args...)
		if err != nil {
			return nil, err
		}
		n := 0
		for rows.Next() {
			var id int64
			var k key
			if err := rows.Scan(&id, &k.src, &k.idx); err != nil {
				rows.Close()
				return nil, err
			}
			r := byKey[k]
			if r == nil {
				rows.Close()
				return nil, fmt.Errorf("storage: chunk %d of source %s inserted twice", k.idx, k.src)
			}
			space := KBSpace(r.job.CollectionID)
			out[space] = append(out[space], VectorItem{ID: id, Vec: r.chunk.Vec})
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if n != len(part) {
			return nil, fmt.Errorf("storage: %d chunks inserted, %d returned", len(part), n)
		}
	}
	return out, nil
}

// KBFailure is a job that failed with Msg as its error. A non-zero
// RetryAt schedules another attempt then (Retries is the retry count it
// will be); zero means failed for good.
type KBFailure struct {
	Job     KBJob
	Msg     string
	Retries int
	RetryAt time.Time
}

// FailKBSource marks the job's source failed for good with msg, unless the
// job was overtaken (ErrConflict).
func (db *DB) FailKBSource(ctx context.Context, j KBJob, owner, msg string) error {
	n, err := db.FailKBSources(ctx, owner, []KBFailure{{Job: j, Msg: msg, Retries: j.Retries}})
	if err == nil && n == 0 {
		return errOvertaken(j)
	}
	return err
}

// FailKBSources marks the jobs' sources failed with their errors, retries
// scheduled where asked, in one transaction; overtaken jobs are skipped.
// It returns how many it marked.
func (db *DB) FailKBSources(ctx context.Context, owner string, fails []KBFailure) (marked int, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		jobs := make([]KBJob, len(fails))
		for i, f := range fails {
			jobs[i] = f.Job
		}
		cur, err := currentJobs(ctx, tx, jobs, owner)
		if err != nil || len(cur) == 0 {
			marked = 0
			return err
		}
		live := make(map[string]bool, len(cur))
		for _, j := range cur {
			live[j.SourceID] = true
		}
		upd, err := tx.PrepareContext(ctx, `UPDATE kb_sources SET status = 'failed', error = ?, retries = ?, retry_at = ?,
			lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer upd.Close()
		now := ms(time.Now())
		var ids []string
		for _, f := range fails {
			if !live[f.Job.SourceID] {
				continue
			}
			var at any
			if !f.RetryAt.IsZero() {
				at = ms(f.RetryAt)
			}
			if _, err := upd.ExecContext(ctx, f.Msg, f.Retries, at, now, f.Job.SourceID); err != nil {
				return err
			}
			ids = append(ids, f.Job.SourceID)
		}
		marked = len(ids)
		return db.emitSources(ctx, tx, EventKBSourceFailed, ids)
	})
	return marked, err
}

// sourceEventCols are the columns an event's source view is built from
// (scanEventSources reads them).
const sourceEventCols = `id, org_id, collection_id, external_id, title, status, chunk_count, file_size,
	error, metadata, content_role, created_at, updated_at`

// eventSource is a source as its events show it, with its organization.
type eventSource struct {
	s   Source
	org string
}

// scanEventSources reads rows of sourceEventCols by id, and closes rows.
func scanEventSources(rows *sql.Rows) (map[string]eventSource, error) {
	defer rows.Close()
	out := map[string]eventSource{}
	for rows.Next() {
		var x eventSource
		var errText sql.NullString
		var meta string
		var created, updated int64
		if err := rows.Scan(&x.s.ID, &x.org, &x.s.CollectionID, &x.s.ExternalID, &x.s.Title, &x.s.Status, &x.s.ChunkCount,
			&x.s.FileSize, &errText, &meta, &x.s.ContentRole, &created, &updated); err != nil {
			return nil, err
		}
		if errText.Valid {
			x.s.Error = &errText.String
		}
		x.s.Metadata = []byte(meta)
		x.s.CreatedAt, x.s.UpdatedAt = fromMS(created), fromMS(updated)
		out[x.s.ID] = x
	}
	return out, rows.Err()
}

// emitSources writes a kb.source.* event for each source, read inside tx
// with one query, in the order of ids.
func (db *DB) emitSources(ctx context.Context, tx *sql.Tx, typ string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+sourceEventCols+" FROM kb_sources WHERE id IN ("+placeholders("?", len(ids))+")", args...)
	if err != nil {
		return fmt.Errorf("storage: event sources: %w", err)
	}
	srcs, err := scanEventSources(rows)
	if err != nil {
		return err
	}
	return db.emitSourceEvents(ctx, tx, typ, ids, srcs)
}

// emitSourceEvents writes a kb.source.* event for each of ids, in order,
// from the sources read.
func (db *DB) emitSourceEvents(ctx context.Context, tx *sql.Tx, typ string, ids []string, srcs map[string]eventSource) error {
	view := db.eventViews().Source
	evs := make([]pendingEvent, 0, len(ids))
	for _, id := range ids {
		x, ok := srcs[id]
		if !ok {
			return fmt.Errorf("storage: event source %s: %w", id, ErrNotFound)
		}
		var data any = map[string]string{"id": id}
		if view != nil {
			data = view(x.s)
		}
		evs = append(evs, pendingEvent{typ: typ, subject: "kb_source:" + id, orgID: x.org, data: data})
	}
	_, err := db.insertEvents(ctx, tx, evs)
	return err
}
