package orgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// NewKey is a key to store: its secret is already hashed by the caller.
type NewKey struct {
	OrgID     string
	UserID    string
	Name      string
	Prefix    string // display prefix, e.g. "agd_Ab12Cd"
	Hash      []byte // SHA-256 of the full key
	RateLimit int    // requests per minute
	ExpiresAt *time.Time
}

// APIKey is a stored key, without its secret.
type APIKey struct {
	ID        string
	OrgID     string
	UserID    string
	UserEmail string
	Name      string
	Prefix    string
	RateLimit int
	ExpiresAt *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
}

// KeyAuth is what authentication needs to know about a presented key: the
// creator's current role comes from the users table, so a role change or a
// removal takes effect on the next lookup.
type KeyAuth struct {
	KeyID     string
	OrgID     string
	UserID    string
	Role      string
	Prefix    string
	RateLimit int
	ExpiresAt *time.Time
}

// CreateKey stores a new key for a user of the organization.
func (db *Orgs) CreateKey(ctx context.Context, k NewKey) (APIKey, error) {
	var out APIKey
	err := db.authWrite(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = insertKey(ctx, tx, k)
		return err
	})
	return out, err
}

func insertKey(ctx context.Context, tx *sql.Tx, k NewKey) (APIKey, error) {
	a := APIKey{ID: uuid.NewString(), OrgID: k.OrgID, UserID: k.UserID, Name: k.Name, Prefix: k.Prefix,
		RateLimit: k.RateLimit, ExpiresAt: k.ExpiresAt, CreatedAt: time.Now().UTC()}
	_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, org_id, user_id, name, prefix, hash, rate_limit, expires_at, created_at)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ? AND org_id = ?)`,
		a.ID, a.OrgID, a.UserID, a.Name, a.Prefix, k.Hash, a.RateLimit, sqldb.NullMS(a.ExpiresAt), sqldb.MS(a.CreatedAt), a.UserID, a.OrgID)
	if err != nil {
		return APIKey{}, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM api_keys WHERE id = ?", a.ID).Scan(&n); err != nil {
		return APIKey{}, err
	}
	if n == 0 {
		return APIKey{}, fmt.Errorf("user of the key: %w", sqldb.ErrNotFound)
	}
	return a, nil
}

// LookupKey finds the key with the given hash that is not revoked and whose
// creator still belongs to its organization. Expiry is left to the caller,
// which knows the time.
func (db *Orgs) LookupKey(ctx context.Context, hash []byte) (KeyAuth, error) {
	var k KeyAuth
	var exp sql.NullInt64
	err := db.c.ReadRow(ctx, `SELECT k.id, k.org_id, k.user_id, u.role, k.prefix, k.rate_limit, k.expires_at
		FROM api_keys k JOIN users u ON u.id = k.user_id AND u.org_id = k.org_id
		WHERE k.hash = ? AND k.revoked_at IS NULL`, hash).
		Scan(&k.KeyID, &k.OrgID, &k.UserID, &k.Role, &k.Prefix, &k.RateLimit, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return KeyAuth{}, fmt.Errorf("api key: %w", sqldb.ErrNotFound)
	}
	k.ExpiresAt = sqldb.OptMS(exp)
	return k, err
}

// ListKeys lists an organization's keys, newest first, revoked ones included.
// Lists are kept per organization until the auth epoch moves (any key or
// user change, in any process), so repeated reads skip SQL.
func (db *Orgs) ListKeys(ctx context.Context, orgID string) ([]APIKey, error) {
	epoch, err := db.c.AuthEpoch(ctx)
	if err != nil {
		return nil, err
	}
	db.keyListMu.Lock()
	if db.keyListEpoch != epoch || db.keyLists == nil {
		db.keyListEpoch, db.keyLists = epoch, map[string][]APIKey{}
	}
	cached, ok := db.keyLists[orgID]
	db.keyListMu.Unlock()
	if ok {
		return slices.Clone(cached), nil
	}
	// Read after the epoch: a change in between makes the list fresher than
	// the epoch it is filed under, never staler.
	keys, err := db.listKeys(ctx, orgID)
	if err != nil {
		return nil, err
	}
	db.keyListMu.Lock()
	if db.keyListEpoch == epoch && len(db.keyLists) < 10000 {
		db.keyLists[orgID] = keys
	}
	db.keyListMu.Unlock()
	return slices.Clone(keys), nil
}

func (db *Orgs) listKeys(ctx context.Context, orgID string) ([]APIKey, error) {
	rows, err := db.c.ReadRows(ctx, `SELECT k.id, k.org_id, k.user_id, u.email, k.name, k.prefix, k.rate_limit,
		k.expires_at, k.revoked_at, k.created_at
		FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.org_id = ? ORDER BY k.created_at DESC, k.rowid DESC`, orgID)
	if err != nil {
		return nil, err
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (APIKey, error) {
		var a APIKey
		var exp, rev sql.NullInt64
		var created int64
		err := sc.Scan(&a.ID, &a.OrgID, &a.UserID, &a.UserEmail, &a.Name, &a.Prefix, &a.RateLimit, &exp, &rev, &created)
		a.ExpiresAt, a.RevokedAt, a.CreatedAt = sqldb.OptMS(exp), sqldb.OptMS(rev), sqldb.FromMS(created)
		return a, err
	})
}

// RevokeKey revokes a key. With orgID empty any organization's key may be
// revoked (the CLI, which owns the file); otherwise only that organization's.
// Revoking twice is fine; an unknown key is sqldb.ErrNotFound.
func (db *Orgs) RevokeKey(ctx context.Context, orgID, keyID string) error {
	return db.authWrite(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?)
			WHERE id = ? AND (? = '' OR org_id = ?)`, sqldb.MS(time.Now()), keyID, orgID, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("api key %q: %w", keyID, sqldb.ErrNotFound)
		}
		return nil
	})
}

// ErrOwnerKey refuses RevokeKeyAs on an owner's key by a non-owner.
var ErrOwnerKey = errors.New("the key belongs to an owner")

// RevokeKeyAs revokes a key of the organization on behalf of a member:
// unless byOwner, a key whose creator is an owner is refused with
// ErrOwnerKey and left alone. The check and the change are one
// transaction, so a role change cannot slip in between.
func (db *Orgs) RevokeKeyAs(ctx context.Context, orgID, keyID string, byOwner bool) error {
	return db.authWrite(ctx, func(tx *sql.Tx) error {
		var role sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT u.role FROM api_keys k LEFT JOIN users u ON u.id = k.user_id
			WHERE k.id = ? AND k.org_id = ?`, keyID, orgID).Scan(&role)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("api key %q: %w", keyID, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if role.String == "owner" && !byOwner {
			return ErrOwnerKey
		}
		_, err = tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?", sqldb.MS(time.Now()), keyID)
		return err
	})
}

// authWrite is Write for a change that moves the auth epoch (a key, a
// user's role or membership): once it commits, this process's auth cache
// is dropped at once; other processes hear of it from the epoch trigger's
// NOTIFY (migration 0026).
func (db *Orgs) authWrite(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		db.c.Notify(tx, sqldb.ChanAuth)
		return fn(tx)
	})
}
