package kbstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/vectorstore"
)

// KBDone is a processed job with its chunks (vectors set).
type KBDone struct {
	Job    KBJob
	Chunks []KBChunk
}

// CompleteKBSources replaces the chunks and vectors (made by model m;
// writing them logs the chunks for the keyword index too) of processed
// jobs and marks them completed with their chunk counts, all in one
// transaction of multi-row statements. A job overtaken by a newer write, a
// deletion or a reclaim is skipped and writes nothing; completed counts the
// others. A collection whose vectors another model made is sqldb.ErrConflict.
func (db *Knowledge) CompleteKBSources(ctx context.Context, owner string, m vectorstore.VectorModel, done []KBDone) (completed int, err error) {
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		completed = 0
		if len(done) == 0 {
			return nil
		}
		rows := make([][]any, len(done))
		for i, d := range done {
			rows[i] = []any{d.Job.SourceID, d.Job.Revision, len(d.Chunks)}
		}
		srcs, err := db.finishJobs(ctx, tx, owner, `status = 'completed', chunk_count = v.column3, error = NULL,
			retries = 0, retry_at = NULL`, []string{"text", "bigint", "bigint"}, rows)
		if err != nil {
			return err
		}
		var ids []string
		var keep []KBDone
		spaces := map[string]bool{}
		for _, d := range done {
			if _, ok := srcs[d.Job.SourceID]; !ok {
				continue // overtaken
			}
			ids, keep = append(ids, d.Job.SourceID), append(keep, d)
			if s := KBSpace(d.Job.CollectionID); !spaces[s] {
				spaces[s] = true
				if err := vectorstore.EnsureSpace(ctx, tx, s, m); err != nil {
					return err
				}
			}
			if d.Job.HadChunks {
				if err := deleteSourceChunks(ctx, tx, d.Job.CollectionID, d.Job.SourceID); err != nil {
					return err
				}
			}
		}
		items, err := db.insertChunks(ctx, tx, keep)
		if err != nil {
			return err
		}
		for space, its := range items {
			if err := vectorstore.PutItems(ctx, tx, space, m.Dims, its); err != nil {
				return err
			}
		}
		completed = len(keep)
		return db.emitSourceEvents(ctx, tx, EventKBSourceCompleted, ids, srcs)
	})
	return completed, err
}

// chunkRowsPerInsert keeps a multi-row chunk insert under SQLite's limit of
// bound parameters.
const chunkRowsPerInsert = 400

// insertChunks writes the jobs' chunks with multi-row inserts and returns
// their vectors, keyed by the new chunk ids, per vector space. The ids are
// given, following the table's AUTOINCREMENT sequence: ids never come back
// after a delete, as the index mirrors expect. On PostgreSQL each id is
// one nextval of the identity's sequence: writes run concurrently there,
// and a block reserved as nextval then setval overlapped another
// transaction's (a duplicate chunk id in a CI run with two workers).
func (db *Knowledge) insertChunks(ctx context.Context, tx *sql.Tx, done []KBDone) (map[string][]vectorstore.VectorItem, error) {
	n := 0
	for _, d := range done {
		n += len(d.Chunks)
	}
	ids, err := db.chunkIDs(ctx, tx, n)
	if err != nil {
		return nil, err
	}
	out := map[string][]vectorstore.VectorItem{}
	args := make([]any, 0, 7*chunkRowsPerInsert)
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO kb_chunks (id, source_id, collection_id, chunk_index, heading_path, content, tokens)
			VALUES `+sqldb.Placeholders("(?, ?, ?, ?, ?, ?, ?)", len(args)/7), args...)
		args = args[:0]
		return err
	}
	for _, d := range done {
		space := KBSpace(d.Job.CollectionID)
		for _, c := range d.Chunks {
			hpj, _ := json.Marshal(c.HeadingPath)
			if c.HeadingPath == nil {
				hpj = []byte("[]")
			}
			id := ids[0]
			ids = ids[1:]
			args = append(args, id, d.Job.SourceID, d.Job.CollectionID, c.Index, string(hpj), c.Content, c.Tokens)
			out[space] = append(out[space], vectorstore.VectorItem{ID: id, Vec: c.Vec})
			if len(args) == cap(args) {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, flush()
}

// chunkIDs returns n new chunk ids, ascending.
func (db *Knowledge) chunkIDs(ctx context.Context, tx *sql.Tx, n int) ([]int64, error) {
	return db.c.Dialect().ReserveIDs(ctx, tx, "kb_chunks", n)
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

// FailKBSources marks the jobs' sources failed with their errors, retries
// scheduled where asked, in one transaction; overtaken jobs are skipped.
// It returns how many it marked.
func (db *Knowledge) FailKBSources(ctx context.Context, owner string, fails []KBFailure) (marked int, err error) {
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		rows := make([][]any, len(fails))
		ids := make([]string, 0, len(fails))
		for i, f := range fails {
			var at any
			if !f.RetryAt.IsZero() {
				at = sqldb.MS(f.RetryAt)
			}
			rows[i] = []any{f.Job.SourceID, f.Job.Revision, f.Msg, f.Retries, at}
		}
		srcs, err := db.finishJobs(ctx, tx, owner, "status = 'failed', error = v.column3, retries = v.column4, retry_at = v.column5",
			[]string{"text", "bigint", "text", "bigint", "bigint"}, rows)
		if err != nil {
			return err
		}
		for _, f := range fails {
			if _, ok := srcs[f.Job.SourceID]; ok {
				ids = append(ids, f.Job.SourceID)
			}
		}
		marked = len(ids)
		return db.emitSourceEvents(ctx, tx, EventKBSourceFailed, ids, srcs)
	})
	return marked, err
}

// ReleaseKBSources gives claimed jobs back (pending, no lease), e.g. when
// the worker stops before finishing them; overtaken jobs are left alone.
func (db *Knowledge) ReleaseKBSources(ctx context.Context, jobs []KBJob, owner string) error {
	if len(jobs) == 0 {
		return nil
	}
	rows := make([][]any, len(jobs))
	for i, j := range jobs {
		rows[i] = []any{j.SourceID, j.Revision}
	}
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := db.finishJobs(ctx, tx, owner, "status = 'pending'", []string{"text", "bigint"}, rows)
		return err
	})
}

// finishJobs applies set (which may read v.column3 on: each row's values
// after the source id and revision) to the sources of rows still current
// (same revision, lease held by owner), drops their lease and returns them
// as events show them; the others were overtaken (a newer write, a
// deletion, a reclaim) and stay as they are. types are the columns' types
// for PostgreSQL, where a bound parameter in VALUES is text unless cast.
func (db *Knowledge) finishJobs(ctx context.Context, tx *sql.Tx, owner, set string, types []string, rows [][]any) (map[string]eventSource, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	args := []any{sqldb.MS(time.Now())}
	for _, r := range rows {
		args = append(args, r...)
	}
	args = append(args, owner)
	ps := make([]string, len(rows[0]))
	for i := range ps {
		ps[i] = db.c.Dialect().Param(types[i])
	}
	row := "(" + strings.Join(ps, ", ") + ")"
	res, err := tx.QueryContext(ctx, `UPDATE kb_sources SET `+set+`, lease_owner = NULL, lease_until = NULL, updated_at = ?
		FROM (VALUES `+sqldb.Placeholders(row, len(rows))+`) AS v
		WHERE kb_sources.id = v.column1 AND kb_sources.revision = v.column2 AND kb_sources.lease_owner = ?
		RETURNING `+sourceEventCols, args...)
	if err != nil {
		return nil, err
	}
	return scanEventSources(res)
}

// eventSource is a source as its events show it, with its organization.
type eventSource struct {
	s   Source
	org string
}

// sourceEventCols are a source's columns with its organization.
const sourceEventCols = sourceCols + ", org_id"

// scanEventSources reads rows of sourceEventCols by id, and closes rows.
func scanEventSources(rows *sql.Rows) (map[string]eventSource, error) {
	out := map[string]eventSource{}
	return out, sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var x eventSource
		var err error
		x.s, err = scanSource(sc, &x.org)
		out[x.s.ID] = x
		return err
	})
}

// emitSourceEvents writes a kb.source.* event for each of ids, in order,
// recording the source as read (SnapshotVersion).
func (db *Knowledge) emitSourceEvents(ctx context.Context, tx *sql.Tx, typ string, ids []string, srcs map[string]eventSource) error {
	evs := make([]sqldb.PendingEvent, 0, len(ids))
	for _, id := range ids {
		x, ok := srcs[id]
		if !ok {
			return fmt.Errorf("storage: event source %s: %w", id, sqldb.ErrNotFound)
		}
		evs = append(evs, sqldb.PendingEvent{Type: typ, Subject: "kb_source:" + id, OrgID: x.org, Data: x.s,
			Version: SnapshotVersion})
	}
	_, err := db.c.InsertEvents(ctx, tx, evs)
	return err
}

// SnapshotVersion is the format of the data kb.source.* events record
// (sqldb.Event.Version): the Source as JSON, read back with DecodeSource;
// the events feature renders the public body from it.
const SnapshotVersion = 1

// DecodeSource reads the data of a kb.source.* event recorded in format
// version.
func DecodeSource(data []byte, version int) (Source, error) {
	var s Source
	if version != SnapshotVersion {
		return s, fmt.Errorf("storage: source snapshot format %d", version)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("storage: source snapshot: %w", err)
	}
	return s, nil
}
