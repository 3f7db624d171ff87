package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Collection is a knowledge collection of one organization.
type Collection struct {
	ID          string
	OrgID       string
	Name        string
	Description string
	SourceCount int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// KBSpace is the vector space of a collection's chunks.
func KBSpace(collectionID string) string { return "kb:" + collectionID }

// CreateCollection creates a collection; a name taken in the organization is ErrConflict.
func (db *DB) CreateCollection(ctx context.Context, orgID, name, description string) (Collection, error) {
	now := time.Now().UTC()
	c := Collection{ID: uuid.NewString(), OrgID: orgID, Name: name, Description: description, CreatedAt: now, UpdatedAt: now}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO kb_collections (id, org_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
			c.ID, orgID, name, description, ms(now), ms(now))
		if isUnique(err) {
			return fmt.Errorf("collection %q exists: %w", name, ErrConflict)
		}
		return err
	})
	return c, err
}

const collectionCols = `c.id, c.org_id, c.name, c.description, c.created_at, c.updated_at,
	(SELECT count(*) FROM kb_sources s WHERE s.collection_id = c.id)`

func scanCollection(sc interface{ Scan(...any) error }) (Collection, error) {
	var c Collection
	var created, updated int64
	err := sc.Scan(&c.ID, &c.OrgID, &c.Name, &c.Description, &created, &updated, &c.SourceCount)
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	return c, err
}

// GetCollection returns a collection of the organization; a collection of
// another organization is ErrNotFound, exactly like a missing one.
func (db *DB) GetCollection(ctx context.Context, orgID, id string) (Collection, error) {
	c, err := scanCollection(db.r.QueryRowContext(ctx, "SELECT "+collectionCols+" FROM kb_collections c WHERE c.id = ? AND c.org_id = ?", id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("collection %s: %w", id, ErrNotFound)
	}
	return c, err
}

// FindCollection finds a collection of the organization by id or name.
func (db *DB) FindCollection(ctx context.Context, orgID, idOrName string) (Collection, error) {
	c, err := scanCollection(db.r.QueryRowContext(ctx, "SELECT "+collectionCols+
		" FROM kb_collections c WHERE c.org_id = ? AND (c.id = ? OR c.name = ?) ORDER BY c.id = ? DESC LIMIT 1", orgID, idOrName, idOrName, idOrName))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("collection %q: %w", idOrName, ErrNotFound)
	}
	return c, err
}

// ListCollections returns a page of the organization's collections, oldest
// first, and the total count.
func (db *DB) ListCollections(ctx context.Context, orgID string, limit, offset int) ([]Collection, int, error) {
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM kb_collections WHERE org_id = ?", orgID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+collectionCols+" FROM kb_collections c WHERE c.org_id = ? ORDER BY c.created_at, c.id LIMIT ? OFFSET ?", orgID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Collection{}
	for rows.Next() {
		c, err := scanCollection(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

// DeleteCollection removes a collection with its sources, chunks and
// vectors.
func (db *DB) DeleteCollection(ctx context.Context, orgID, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM kb_collections WHERE id = ? AND org_id = ?", id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("collection %s: %w", id, ErrNotFound)
		}
		return dropSpace(ctx, tx, KBSpace(id))
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
// metadata and role in place and reports unchanged.
func (db *DB) UpsertSource(ctx context.Context, orgID, collectionID string, in SourceInput) (UpsertResult, error) {
	var res UpsertResult
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = upsertSource(ctx, tx, orgID, collectionID, in)
		return err
	})
	return res, err
}

func upsertSource(ctx context.Context, tx *sql.Tx, orgID, collectionID string, in SourceInput) (UpsertResult, error) {
	sum := sha256.Sum256([]byte(in.Content))
	now := ms(time.Now())
	var id, title, meta, role string
	var hash []byte
	err := tx.QueryRowContext(ctx, "SELECT id, content_hash, title, metadata, content_role FROM kb_sources WHERE collection_id = ? AND external_id = ?",
		collectionID, in.ExternalID).Scan(&id, &hash, &title, &meta, &role)
	if errors.Is(err, sql.ErrNoRows) {
		id = uuid.NewString()
		if in.Metadata == nil {
			in.Metadata = []byte("{}")
		}
		if in.ContentRole == "" {
			in.ContentRole = "knowledge"
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO kb_sources (id, org_id, collection_id, external_id, title, content, content_hash,
			metadata, content_role, status, file_size, queued_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'processing', ?, ?, ?, ?)`,
			id, orgID, collectionID, in.ExternalID, in.Title, in.Content, sum[:], string(in.Metadata), in.ContentRole,
			len(in.Content), now, now, now)
		return UpsertResult{DocumentID: id, Status: SourceCreated}, err
	}
	if err != nil {
		return UpsertResult{}, err
	}
	if in.Metadata == nil {
		in.Metadata = []byte(meta)
	}
	if in.ContentRole == "" {
		in.ContentRole = role
	}
	if string(hash) == string(sum[:]) {
		if title != in.Title || meta != string(in.Metadata) || role != in.ContentRole {
			_, err = tx.ExecContext(ctx, "UPDATE kb_sources SET title = ?, metadata = ?, content_role = ?, updated_at = ? WHERE id = ?",
				in.Title, string(in.Metadata), in.ContentRole, now, id)
		}
		return UpsertResult{DocumentID: id, Status: SourceUnchanged}, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE kb_sources SET title = ?, content = ?, content_hash = ?, metadata = ?, content_role = ?,
		status = 'processing', error = NULL, file_size = ?, revision = revision + 1, queued_at = ?,
		lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ?`,
		in.Title, in.Content, sum[:], string(in.Metadata), in.ContentRole, len(in.Content), now, now, id)
	return UpsertResult{DocumentID: id, Status: SourceUpdated}, err
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
func (db *DB) ListSources(ctx context.Context, collectionID string, f SourceFilter) ([]Source, int, error) {
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
	rows, err := db.r.QueryContext(ctx, `SELECT id, collection_id, external_id, title, status, chunk_count, file_size, error,
		metadata, content_role, created_at, updated_at FROM kb_sources WHERE `+where+` ORDER BY created_at, rowid LIMIT ? OFFSET ?`,
		append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Source{}
	for rows.Next() {
		var s Source
		var errText sql.NullString
		var meta string
		var created, updated int64
		if err := rows.Scan(&s.ID, &s.CollectionID, &s.ExternalID, &s.Title, &s.Status, &s.ChunkCount, &s.FileSize,
			&errText, &meta, &s.ContentRole, &created, &updated); err != nil {
			return nil, 0, err
		}
		if errText.Valid {
			s.Error = &errText.String
		}
		s.Metadata = []byte(meta)
		s.CreatedAt, s.UpdatedAt = fromMS(created), fromMS(updated)
		out = append(out, s)
	}
	return out, total, rows.Err()
}

// DeleteSources deletes sources of a collection by external id in one
// transaction, with their chunks and vectors; ids not found are returned
// apart.
func (db *DB) DeleteSources(ctx context.Context, collectionID string, externalIDs []string) (deleted, notFound []string, err error) {
	deleted, notFound = []string{}, []string{}
	err = db.write(ctx, func(tx *sql.Tx) error {
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
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return err
	}
	if err := deleteVectors(ctx, tx, KBSpace(collectionID), ids); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM kb_chunks WHERE source_id = ?", sourceID)
	return err
}
