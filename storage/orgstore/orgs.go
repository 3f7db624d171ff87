package orgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// Org is an organization: the unit every piece of data is scoped to.
type Org struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// User is a person's membership of one organization, with a role.
type User struct {
	ID        string
	OrgID     string
	Email     string
	Role      string
	CreatedAt time.Time
}

// CreateOrg creates an organization. A taken name is sqldb.ErrConflict.
func (db *Orgs) CreateOrg(ctx context.Context, name string) (Org, error) {
	o := Org{ID: uuid.NewString(), Name: name, CreatedAt: time.Now().UTC()}
	err := db.c.Write(ctx, func(tx *sql.Tx) error { return insertOrg(ctx, tx, o) })
	return o, err
}

func insertOrg(ctx context.Context, tx *sql.Tx, o Org) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)", o.ID, o.Name, sqldb.MS(o.CreatedAt))
	if sqldb.IsUnique(err) {
		return fmt.Errorf("organization %q exists: %w", o.Name, sqldb.ErrConflict)
	}
	return err
}

// Bootstrap creates the first organization, its owner and the owner's key in
// one transaction, only when the database has no organization yet. It
// reports whether it created them, so a second process starting on the same
// file never prints a second key.
func (db *Orgs) Bootstrap(ctx context.Context, orgName, ownerEmail string, key NewKey) (bool, error) {
	created := false
	err := db.authWrite(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM orgs").Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		o := Org{ID: uuid.NewString(), Name: orgName, CreatedAt: time.Now().UTC()}
		if err := insertOrg(ctx, tx, o); err != nil {
			return err
		}
		u := User{ID: uuid.NewString(), OrgID: o.ID, Email: ownerEmail, Role: "owner", CreatedAt: o.CreatedAt}
		if err := insertUser(ctx, tx, u); err != nil {
			return err
		}
		key.OrgID, key.UserID = o.ID, u.ID
		if _, err := insertKey(ctx, tx, key); err != nil {
			return err
		}
		created = true
		return nil
	})
	return created, err
}

// CreateOrgWithOwner creates an organization with its owner user and the
// owner's first key, all or nothing.
func (db *Orgs) CreateOrgWithOwner(ctx context.Context, name, ownerEmail string, key NewKey) (Org, User, APIKey, error) {
	o := Org{ID: uuid.NewString(), Name: name, CreatedAt: time.Now().UTC()}
	u := User{ID: uuid.NewString(), OrgID: o.ID, Email: ownerEmail, Role: "owner", CreatedAt: o.CreatedAt}
	var k APIKey
	err := db.authWrite(ctx, func(tx *sql.Tx) error {
		if err := insertOrg(ctx, tx, o); err != nil {
			return err
		}
		if err := insertUser(ctx, tx, u); err != nil {
			return err
		}
		key.OrgID, key.UserID = o.ID, u.ID
		var err error
		k, err = insertKey(ctx, tx, key)
		return err
	})
	k.UserEmail = u.Email
	return o, u, k, err
}

// FindOrg finds an organization by id or by name.
func (db *Orgs) FindOrg(ctx context.Context, idOrName string) (Org, error) {
	var o Org
	var created int64
	err := db.r.QueryRowContext(ctx, "SELECT id, name, created_at FROM orgs WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1",
		idOrName, idOrName, idOrName).Scan(&o.ID, &o.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Org{}, fmt.Errorf("organization %q: %w", idOrName, sqldb.ErrNotFound)
	}
	o.CreatedAt = sqldb.FromMS(created)
	return o, err
}

// ListOrgs lists every organization, oldest first.
func (db *Orgs) ListOrgs(ctx context.Context) ([]Org, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id, name, created_at FROM orgs ORDER BY created_at, rowid")
	if err != nil {
		return nil, err
	}
	return scanOrgs(rows)
}

// AddUser adds a user to an organization. An existing email is sqldb.ErrConflict.
func (db *Orgs) AddUser(ctx context.Context, orgID, email, role string) (User, error) {
	u := User{ID: uuid.NewString(), OrgID: orgID, Email: email, Role: role, CreatedAt: time.Now().UTC()}
	err := db.c.Write(ctx, func(tx *sql.Tx) error { return insertUser(ctx, tx, u) })
	return u, err
}

func insertUser(ctx context.Context, tx *sql.Tx, u User) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO users (id, org_id, email, role, created_at) VALUES (?, ?, ?, ?, ?)",
		u.ID, u.OrgID, u.Email, u.Role, sqldb.MS(u.CreatedAt))
	if sqldb.IsUnique(err) {
		return fmt.Errorf("user %q exists in the organization: %w", u.Email, sqldb.ErrConflict)
	}
	return err
}

// RemoveUser removes a user from an organization; the user's keys go with
// them and stop working at once.
func (db *Orgs) RemoveUser(ctx context.Context, orgID, email string) error {
	return db.authWrite(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM users WHERE org_id = ? AND email = ?", orgID, email)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user %q: %w", email, sqldb.ErrNotFound)
		}
		return nil
	})
}

// FindUser finds a user of an organization by email.
func (db *Orgs) FindUser(ctx context.Context, orgID, email string) (User, error) {
	return db.oneUser(ctx, "WHERE org_id = ? AND email = ?", orgID, email)
}

// FirstOwner returns the organization's oldest owner.
func (db *Orgs) FirstOwner(ctx context.Context, orgID string) (User, error) {
	return db.oneUser(ctx, "WHERE org_id = ? AND role = 'owner' ORDER BY created_at, rowid LIMIT 1", orgID)
}

func (db *Orgs) oneUser(ctx context.Context, where string, args ...any) (User, error) {
	us, err := db.users(ctx, where, args...)
	if err != nil {
		return User{}, err
	}
	if len(us) == 0 {
		return User{}, fmt.Errorf("user: %w", sqldb.ErrNotFound)
	}
	return us[0], nil
}

// ListUsers lists the users of an organization, oldest first.
func (db *Orgs) ListUsers(ctx context.Context, orgID string) ([]User, error) {
	return db.users(ctx, "WHERE org_id = ? ORDER BY created_at, rowid", orgID)
}

func (db *Orgs) users(ctx context.Context, where string, args ...any) ([]User, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id, org_id, email, role, created_at FROM users "+where, args...)
	if err != nil {
		return nil, err
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (User, error) {
		var u User
		var created int64
		err := sc.Scan(&u.ID, &u.OrgID, &u.Email, &u.Role, &created)
		u.CreatedAt = sqldb.FromMS(created)
		return u, err
	})
}

// OrgsWithoutAdminKey lists the organizations in which no owner or admin
// holds a usable key (not revoked, not expired at now): nobody can manage
// them through the API until someone runs agentd key create.
func (db *Orgs) OrgsWithoutAdminKey(ctx context.Context, now time.Time) ([]Org, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT o.id, o.name, o.created_at FROM orgs o
		WHERE NOT EXISTS (SELECT 1 FROM api_keys k JOIN users u ON u.id = k.user_id
			WHERE k.org_id = o.id AND u.role IN ('owner', 'admin')
			AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?))
		ORDER BY o.created_at`, sqldb.MS(now))
	if err != nil {
		return nil, fmt.Errorf("storage: orgs without key: %w", err)
	}
	return scanOrgs(rows)
}

// scanOrgs reads rows of (id, name, created_at) and closes them.
func scanOrgs(rows *sql.Rows) ([]Org, error) {
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (Org, error) {
		var o Org
		var created int64
		err := sc.Scan(&o.ID, &o.Name, &created)
		o.CreatedAt = sqldb.FromMS(created)
		return o, err
	})
}
