// Package kbstore is the SQL of the knowledge base: collections, sources
// and their revisions, chunks, the embedding worker's claims and leases,
// and the kb.source.* events each completion writes. Chunk vectors go
// through storage/vectorstore in the same transactions.
package kbstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/vectorstore"
	"github.com/google/uuid"
)

// Event types this store writes, in the transaction of the change each
// reports.
const (
	EventKBSourceCompleted = "kb.source.completed"
	EventKBSourceFailed    = "kb.source.failed"
)

// Knowledge is the knowledge store over the shared connection.
type Knowledge struct {
	c *sqldb.DB
	r *sql.DB
}

// New returns the knowledge store over c.
func New(c *sqldb.DB) *Knowledge { return &Knowledge{c: c, r: c.Reader()} }

// Collection is a knowledge collection of one organization.
type Collection struct {
	ID          string
	OrgID       string
	Name        string
	Description string
	SourceCount int
	// SearchAlpha is the collection's weight of the semantic half in
	// hybrid search; nil keeps the embedder's default.
	SearchAlpha *float64
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// KBSpace is the vector space of a collection's chunks.
func KBSpace(collectionID string) string { return "kb:" + collectionID }

// CreateCollection creates a collection; a name taken in the organization is sqldb.ErrConflict.
func (db *Knowledge) CreateCollection(ctx context.Context, orgID, name, description string) (Collection, error) {
	return db.CreateCollectionWith(ctx, Collection{OrgID: orgID, Name: name, Description: description})
}

// CreateCollectionWith creates a collection from c's organization, name,
// description and settings (id and times are set here).
func (db *Knowledge) CreateCollectionWith(ctx context.Context, c Collection) (Collection, error) {
	now := time.Now().UTC()
	c.ID, c.CreatedAt, c.UpdatedAt, c.SourceCount = uuid.NewString(), now, now, 0
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO kb_collections (id, org_id, name, description, search_alpha, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			c.ID, c.OrgID, c.Name, c.Description, c.SearchAlpha, sqldb.MS(now), sqldb.MS(now))
		if sqldb.IsUnique(err) {
			return fmt.Errorf("collection %q exists: %w", c.Name, sqldb.ErrConflict)
		}
		return err
	})
	return c, err
}

// CollectionUpdate is a partial update of a collection: nil fields keep
// their value; SetSearchAlpha writes SearchAlpha (nil clears it).
type CollectionUpdate struct {
	Name           *string
	Description    *string
	SetSearchAlpha bool
	SearchAlpha    *float64
}

// UpdateCollection applies u to a collection of the organization and
// returns it; a missing one is sqldb.ErrNotFound, a name taken sqldb.ErrConflict.
func (db *Knowledge) UpdateCollection(ctx context.Context, orgID, id string, u CollectionUpdate) (Collection, error) {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE kb_collections SET name = coalesce(?, name), description = coalesce(?, description),
			search_alpha = CASE WHEN ? = 1 THEN ? ELSE search_alpha END, updated_at = ? WHERE id = ? AND org_id = ?`,
			u.Name, u.Description, u.SetSearchAlpha, u.SearchAlpha, sqldb.MS(time.Now().UTC()), id, orgID)
		if sqldb.IsUnique(err) {
			return fmt.Errorf("collection %q exists: %w", *u.Name, sqldb.ErrConflict)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("collection %s: %w", id, sqldb.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return Collection{}, err
	}
	return db.GetCollection(ctx, orgID, id)
}

// collectionCols are a collection's columns; the last, its source count,
// costs time in proportion to the sources (CheckCollection reads 0 instead).
const collectionCols = collectionBase + `, (SELECT count(*) FROM kb_sources s WHERE s.collection_id = c.id)`
const collectionBase = `c.id, c.org_id, c.name, c.description, c.search_alpha, c.created_at, c.updated_at`

func scanCollection(sc interface{ Scan(...any) error }) (Collection, error) {
	var c Collection
	var created, updated int64
	var alpha sql.NullFloat64
	err := sc.Scan(&c.ID, &c.OrgID, &c.Name, &c.Description, &alpha, &created, &updated, &c.SourceCount)
	c.CreatedAt, c.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	if alpha.Valid {
		c.SearchAlpha = &alpha.Float64
	}
	return c, err
}

// GetCollection returns a collection of the organization; a collection of
// another organization is sqldb.ErrNotFound, exactly like a missing one.
func (db *Knowledge) GetCollection(ctx context.Context, orgID, id string) (Collection, error) {
	c, err := scanCollection(db.r.QueryRowContext(ctx, "SELECT "+collectionCols+" FROM kb_collections c WHERE c.id = ? AND c.org_id = ?", id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("collection %s: %w", id, sqldb.ErrNotFound)
	}
	return c, err
}

// CheckCollection is GetCollection without the source count (0): the
// check every source write and search makes.
func (db *Knowledge) CheckCollection(ctx context.Context, orgID, id string) (Collection, error) {
	c, err := scanCollection(db.c.ReadRow(ctx, "SELECT "+collectionBase+", 0 FROM kb_collections c WHERE c.id = ? AND c.org_id = ?", id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("collection %s: %w", id, sqldb.ErrNotFound)
	}
	return c, err
}

// FindCollection finds a collection of the organization by id or name.
func (db *Knowledge) FindCollection(ctx context.Context, orgID, idOrName string) (Collection, error) {
	c, err := scanCollection(db.r.QueryRowContext(ctx, "SELECT "+collectionCols+
		" FROM kb_collections c WHERE c.org_id = ? AND (c.id = ? OR c.name = ?) ORDER BY c.id = ? DESC LIMIT 1", orgID, idOrName, idOrName, idOrName))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("collection %q: %w", idOrName, sqldb.ErrNotFound)
	}
	return c, err
}

// ListCollections returns a page of the organization's collections, oldest
// first, and the total count.
func (db *Knowledge) ListCollections(ctx context.Context, orgID string, limit, offset int) ([]Collection, int, error) {
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM kb_collections WHERE org_id = ?", orgID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+collectionCols+" FROM kb_collections c WHERE c.org_id = ? ORDER BY c.created_at, c.id LIMIT ? OFFSET ?", orgID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	out, err := sqldb.Collect(rows, func(sc sqldb.Scanner) (Collection, error) { return scanCollection(sc) })
	return out, total, err
}

// DeleteCollection removes a collection with its sources, chunks and
// vectors.
func (db *Knowledge) DeleteCollection(ctx context.Context, orgID, id string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM kb_collections WHERE id = ? AND org_id = ?", id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("collection %s: %w", id, sqldb.ErrNotFound)
		}
		return vectorstore.DropSpace(ctx, tx, KBSpace(id))
	})
}

// SourceInput is one source write. Metadata nil keeps the stored metadata
// (or {} for a new source); ContentRole "" keeps the stored role (or
// "knowledge").
type SourceInput struct {
	ExternalID  string
	Title       string
	Content     string
	Metadata    []byte // a JSON object
	ContentRole string
}

// Upsert result statuses.
const (
	SourceCreated   = "created"
	SourceUpdated   = "updated"
	SourceUnchanged = "unchanged"
)

// UpsertResult is what a source write did.
type UpsertResult struct {
	DocumentID string
	Status     string // created, updated or unchanged
}

// UpsertSource creates or updates a source by external id in one
// transaction. New content (SHA-256 differs) queues the source for
// processing with a new revision; the same content only updates title,
// metadata and role in place and reports unchanged, unless the source
// failed: then it is queued again (updated), so posting it again retries it.
func (db *Knowledge) UpsertSource(ctx context.Context, orgID, collectionID string, in SourceInput) (UpsertResult, error) {
	res, errs := db.UpsertSources(ctx, orgID, collectionID, []SourceInput{in})
	return res[0], errs[0]
}

// UpsertSources writes sources in order (a repeated external id updates
// what the earlier item wrote) in one transaction. Should that fail, it
// writes them again one transaction each, so a failing item leaves the
// others standing: errs[i] is item i's error.
func (db *Knowledge) UpsertSources(ctx context.Context, orgID, collectionID string, ins []SourceInput) (res []UpsertResult, errs []error) {
	res, errs = make([]UpsertResult, len(ins)), make([]error, len(ins))
	err := db.upsertSources(ctx, orgID, collectionID, ins, res)
	switch {
	case err == nil:
	case len(ins) == 1:
		errs[0] = err
	default:
		for i := range ins {
			errs[i] = db.upsertSources(ctx, orgID, collectionID, ins[i:i+1], res[i:i+1])
		}
	}
	return res, errs
}

// upsertSources writes sources in one transaction, their results into res.
func (db *Knowledge) upsertSources(ctx context.Context, orgID, collectionID string, ins []SourceInput, res []UpsertResult) error {
	st, err := db.c.WriterStmts(ctx, sourceQueries[:]...)
	if err != nil {
		return err
	}
	// READ COMMITTED on PostgreSQL (sqldb.WriteClaim): a source's write is
	// an insert (a concurrent insert of the same external id is a unique
	// violation, run again) or an update by id whose revision + 1 applies
	// to the row's latest version, so the knowledge worker's completion of
	// an older revision is still skipped. SERIALIZABLE failed it against
	// the worker's claims and completions until requests got 500.
	return db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		b := bindStmts(ctx, tx, st)
		if len(ins) > 1 && distinctExternalIDs(ins) {
			return upsertSourcesBatch(ctx, tx, b, orgID, collectionID, ins, res)
		}
		for i, in := range ins {
			var err error
			if res[i], err = upsertSource(ctx, b, orgID, collectionID, in); err != nil {
				return err
			}
		}
		return nil
	})
}

// sourceQueries are a source write's statements, prepared once on the
// writer: find, insert, update in place, queue new content.
var sourceQueries = [...]string{
	"SELECT " + storedSourceCols + " FROM kb_sources WHERE collection_id = ? AND external_id = ?",
	insertSourceHead + newSourceRow,
	"UPDATE kb_sources SET title = ?, metadata = ?, content_role = ?, updated_at = ? WHERE id = ?",
	`UPDATE kb_sources SET title = ?, content = ?, content_hash = ?, metadata = ?, content_role = ?,
		status = 'processing', error = NULL, retries = 0, retry_at = NULL, file_size = ?, revision = revision + 1,
		queued_at = ?, lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ?`,
}

const (
	storedSourceCols = "external_id, id, content_hash, title, metadata, content_role, status"
	insertSourceHead = `INSERT INTO kb_sources (id, org_id, collection_id, external_id, title, content, content_hash,
		metadata, content_role, status, file_size, queued_at, created_at, updated_at) VALUES `
	newSourceRow = "(?, ?, ?, ?, ?, ?, ?, ?, ?, 'processing', ?, ?, ?, ?)"
)

// bindStmts binds prepared writer statements to tx.
func bindStmts(ctx context.Context, tx *sql.Tx, st []*sql.Stmt) []*sql.Stmt {
	out := make([]*sql.Stmt, len(st))
	for i, s := range st {
		out[i] = tx.StmtContext(ctx, s)
	}
	return out
}

// storedSource is what a source write needs to know of the stored row.
type storedSource struct {
	ext, id, title, meta, role, status string
	hash                               []byte
}

func scanStoredSource(r sqldb.Scanner) (storedSource, error) {
	var s storedSource
	err := r.Scan(&s.ext, &s.id, &s.hash, &s.title, &s.meta, &s.role, &s.status)
	return s, err
}

// upsertSource writes one source with the bound sourceQueries.
func upsertSource(ctx context.Context, st []*sql.Stmt, orgID, collectionID string, in SourceInput) (UpsertResult, error) {
	cur, err := scanStoredSource(st[0].QueryRowContext(ctx, collectionID, in.ExternalID))
	now := sqldb.MS(time.Now())
	if errors.Is(err, sql.ErrNoRows) {
		id, args := newSourceArgs(orgID, collectionID, in, now)
		_, err = st[1].ExecContext(ctx, args...)
		return UpsertResult{DocumentID: id, Status: SourceCreated}, err
	}
	if err != nil {
		return UpsertResult{}, err
	}
	return updateSource(ctx, st, cur, in, now)
}

// upsertSourcesBatch writes sources with distinct external ids: multi-row
// INSERTs create the new ones (ON CONFLICT skips the stored ones), then
// only the stored ones are read and updated one by one. A batch of new
// sources costs one statement (a round trip on PostgreSQL), not two a
// source; and the conflict check goes through the unique index whatever
// the planner's statistics say about a table that just grew.
func upsertSourcesBatch(ctx context.Context, tx *sql.Tx, st []*sql.Stmt, orgID, collectionID string, ins []SourceInput, res []UpsertResult) error {
	clear(res) // a created result marks the items the inserts took
	now := sqldb.MS(time.Now())
	at := make(map[string]int, len(ins)) // item index by external id
	for i, in := range ins {
		at[in.ExternalID] = i
	}
	for part := range slices.Chunk(ins, sqldb.RowsPerStatement) {
		args := make([]any, 0, 13*len(part))
		for _, in := range part {
			_, a := newSourceArgs(orgID, collectionID, in, now)
			args = append(args, a...)
		}
		rows, err := tx.QueryContext(ctx, insertSourceHead+sqldb.Placeholders(newSourceRow, len(part))+
			" ON CONFLICT (collection_id, external_id) DO NOTHING RETURNING external_id, id", args...)
		if err != nil {
			return err
		}
		if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
			var ext, id string
			if err := sc.Scan(&ext, &id); err != nil {
				return err
			}
			res[at[ext]] = UpsertResult{DocumentID: id, Status: SourceCreated}
			return nil
		}); err != nil {
			return err
		}
	}
	for i, in := range ins {
		if res[i].Status == SourceCreated {
			continue
		}
		cur, err := scanStoredSource(st[0].QueryRowContext(ctx, collectionID, in.ExternalID))
		if err != nil {
			return err
		}
		if res[i], err = updateSource(ctx, st, cur, in, now); err != nil {
			return err
		}
	}
	return nil
}

// newSourceArgs returns a new source's id and the arguments of newSourceRow.
func newSourceArgs(orgID, collectionID string, in SourceInput, now int64) (string, []any) {
	sum := sha256.Sum256([]byte(in.Content))
	if in.Metadata == nil {
		in.Metadata = []byte("{}")
	}
	if in.ContentRole == "" {
		in.ContentRole = "knowledge"
	}
	id := uuid.NewString()
	return id, []any{id, orgID, collectionID, in.ExternalID, in.Title, in.Content, sum[:],
		string(in.Metadata), in.ContentRole, len(in.Content), now, now, now}
}

// updateSource writes a source over its stored row cur: new content queues
// it again, the same content only touches title, metadata and role.
func updateSource(ctx context.Context, st []*sql.Stmt, cur storedSource, in SourceInput, now int64) (UpsertResult, error) {
	touch, queue := st[2], st[3]
	sum := sha256.Sum256([]byte(in.Content))
	if in.Metadata == nil {
		in.Metadata = []byte(cur.meta)
	}
	if in.ContentRole == "" {
		in.ContentRole = cur.role
	}
	var err error
	if string(cur.hash) == string(sum[:]) && cur.status != "failed" {
		if cur.title != in.Title || cur.meta != string(in.Metadata) || cur.role != in.ContentRole {
			_, err = touch.ExecContext(ctx, in.Title, string(in.Metadata), in.ContentRole, now, cur.id)
		}
		return UpsertResult{DocumentID: cur.id, Status: SourceUnchanged}, err
	}
	_, err = queue.ExecContext(ctx, in.Title, in.Content, sum[:], string(in.Metadata), in.ContentRole, len(in.Content), now, now, cur.id)
	return UpsertResult{DocumentID: cur.id, Status: SourceUpdated}, err
}

// distinctExternalIDs reports whether no external id repeats in ins (a
// repeat must see what the earlier item wrote, so it goes one by one).
func distinctExternalIDs(ins []SourceInput) bool {
	seen := make(map[string]bool, len(ins))
	for _, in := range ins {
		if seen[in.ExternalID] {
			return false
		}
		seen[in.ExternalID] = true
	}
	return true
}

// Source is a stored knowledge source (without its content).
type Source struct {
	ID           string
	CollectionID string
	ExternalID   string
	Title        string
	Status       string
	ChunkCount   int
	FileSize     int
	Error        *string
	Metadata     []byte // JSON object
	ContentRole  string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// SourceFilter narrows ListSources; empty fields do not filter.
type SourceFilter struct {
	ExternalID string
	Status     string
	Limit      int
	Offset     int
}

// ListSources returns a page of a collection's sources, oldest first, and
// the total matching count.
func (db *Knowledge) ListSources(ctx context.Context, collectionID string, f SourceFilter) ([]Source, int, error) {
	where := "collection_id = ?"
	args := []any{collectionID}
	if f.ExternalID != "" {
		where += " AND external_id = ?"
		args = append(args, f.ExternalID)
	}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, f.Status)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM kb_sources WHERE "+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+sourceCols+" FROM kb_sources WHERE "+where+" ORDER BY created_at, rowid LIMIT ? OFFSET ?",
		append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	out, err := sqldb.Collect(rows, func(sc sqldb.Scanner) (Source, error) { return scanSource(sc) })
	return out, total, err
}

// sourceCols are the columns of a Source (scanSource reads them).
const sourceCols = `id, collection_id, external_id, title, status, chunk_count, file_size, error,
	metadata, content_role, created_at, updated_at`

// scanSource reads a row of sourceCols, then into extra any columns after.
func scanSource(sc interface{ Scan(...any) error }, extra ...any) (Source, error) {
	var s Source
	var errText sql.NullString
	var meta string
	var created, updated int64
	err := sc.Scan(append([]any{&s.ID, &s.CollectionID, &s.ExternalID, &s.Title, &s.Status, &s.ChunkCount, &s.FileSize,
		&errText, &meta, &s.ContentRole, &created, &updated}, extra...)...)
	if errText.Valid {
		s.Error = &errText.String
	}
	s.Metadata = []byte(meta)
	s.CreatedAt, s.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return s, err
}

// DeleteSources deletes sources of a collection by external id in one
// transaction, with their chunks and vectors; ids not found are returned
// apart.
func (db *Knowledge) DeleteSources(ctx context.Context, collectionID string, externalIDs []string) (deleted, notFound []string, err error) {
	deleted, notFound = []string{}, []string{}
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		deleted, notFound = deleted[:0], notFound[:0]
		for _, ext := range externalIDs {
			var id string
			err := tx.QueryRowContext(ctx, "SELECT id FROM kb_sources WHERE collection_id = ? AND external_id = ?", collectionID, ext).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				notFound = append(notFound, ext)
				continue
			}
			if err != nil {
				return err
			}
			if err := deleteSourceChunks(ctx, tx, collectionID, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM kb_sources WHERE id = ?", id); err != nil {
				return err
			}
			deleted = append(deleted, ext)
		}
		return nil
	})
	return deleted, notFound, err
}

// deleteSourceChunks removes a source's chunks and their vectors.
func deleteSourceChunks(ctx context.Context, tx *sql.Tx, collectionID, sourceID string) error {
	rows, err := tx.QueryContext(ctx, "SELECT id FROM kb_chunks WHERE source_id = ?", sourceID)
	if err != nil {
		return err
	}
	ids, err := sqldb.Collect(rows, sqldb.ScanOne[int64])
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := vectorstore.DeleteItems(ctx, tx, KBSpace(collectionID), ids); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM kb_chunks WHERE source_id = ?", sourceID)
	return err
}
