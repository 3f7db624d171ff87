package kbstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// FailSource records a source whose content could not be made (a file
// that would not convert): a new one is stored failed with the reason and
// no content; an existing one keeps its content and chunks, is marked
// failed with the reason, and forgets its hash so the next good upload is
// processed whatever it holds.
func (db *Knowledge) FailSource(ctx context.Context, orgID, collectionID string, in SourceInput, reason string) (string, error) {
	now := sqldb.MS(time.Now())
	var id string
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE kb_sources SET status = 'failed', error = ?, content_hash = ?, retry_at = NULL,
			lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE collection_id = ? AND external_id = ? RETURNING id`,
			reason, []byte{}, now, collectionID, in.ExternalID).Scan(&id)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		id = uuid.NewString()
		role := in.ContentRole
		if role == "" {
			role = "knowledge"
		}
		empty := sha256.Sum256(nil)
		_, err = tx.ExecContext(ctx, `INSERT INTO kb_sources (id, org_id, collection_id, external_id, title, content, content_hash,
			metadata, content_role, status, file_size, error, queued_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, 'failed', 0, ?, ?, ?, ?)`,
			id, orgID, collectionID, in.ExternalID, in.Title, empty[:], string(orEmptyObject(in.Metadata)), role, reason, now, now, now)
		return err
	})
	return id, err
}
