package orgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Session is a signed-in dashboard user, as authentication needs it: the
// role comes from the users table, so a role change or a removal takes
// effect on the next request.
type Session struct {
	UserID     string
	OrgID      string
	OrgName    string
	Email      string
	Role       string
	CSRFToken  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// UserLogin is a user row with its password hash, for sign-in.
type UserLogin struct {
	User
	OrgName      string
	PasswordHash string // "" when no password is set
}

// UsersByEmail lists every membership of an email (one per organization)
// with its password hash, oldest first.
func (db *Orgs) UsersByEmail(ctx context.Context, email string) ([]UserLogin, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT u.id, u.org_id, u.email, u.role, u.created_at, o.name, COALESCE(u.password_hash, '')
		FROM users u JOIN orgs o ON o.id = u.org_id WHERE u.email = ? ORDER BY u.created_at, u.id`, email)
	if err != nil {
		return nil, err
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (UserLogin, error) {
		var u UserLogin
		var created int64
		err := sc.Scan(&u.ID, &u.OrgID, &u.Email, &u.Role, &created, &u.OrgName, &u.PasswordHash)
		u.CreatedAt = sqldb.FromMS(created)
		return u, err
	})
}

// SetPassword stores a user's password hash and ends every session of the
// user, so a changed password signs out everywhere.
func (db *Orgs) SetPassword(ctx context.Context, userID, hash string) error {
	return db.authWrite(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE users SET password_hash = ? WHERE id = ?", hash, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user: %w", sqldb.ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM sessions WHERE user_id = ?", userID)
		return err
	})
}

// CreateSession stores a new session under the hash of its id.
func (db *Orgs) CreateSession(ctx context.Context, idHash []byte, userID, csrf string, now, expires time.Time) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, idHash, userID, csrf, sqldb.MS(now), sqldb.MS(now), sqldb.MS(expires))
		return err
	})
}

// LookupSession finds a session by the hash of its id, with its user's
// current role and organization. A missing session is sqldb.ErrNotFound.
func (db *Orgs) LookupSession(ctx context.Context, idHash []byte) (Session, error) {
	var s Session
	var created, seen, expires int64
	err := db.r.QueryRowContext(ctx, `SELECT u.id, u.org_id, o.name, u.email, u.role, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at
		FROM sessions s JOIN users u ON u.id = s.user_id JOIN orgs o ON o.id = u.org_id WHERE s.id_hash = ?`, idHash).
		Scan(&s.UserID, &s.OrgID, &s.OrgName, &s.Email, &s.Role, &s.CSRFToken, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("session: %w", sqldb.ErrNotFound)
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = sqldb.FromMS(created), sqldb.FromMS(seen), sqldb.FromMS(expires)
	return s, err
}

// TouchSession records activity on a session (for the idle timeout).
func (db *Orgs) TouchSession(ctx context.Context, idHash []byte, now time.Time) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?", sqldb.MS(now), idHash)
		return err
	})
}

// DeleteSession ends one session.
func (db *Orgs) DeleteSession(ctx context.Context, idHash []byte) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id_hash = ?", idHash)
		return err
	})
}

// DeleteUserSessions ends every session of a user and returns how many.
func (db *Orgs) DeleteUserSessions(ctx context.Context, userID string) (int64, error) {
	var n int64
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE user_id = ?", userID)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// DeleteExpiredSessions removes sessions past their absolute expiry or idle
// since before idleBefore.
func (db *Orgs) DeleteExpiredSessions(ctx context.Context, now, idleBefore time.Time) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at < ?", sqldb.MS(now), sqldb.MS(idleBefore))
		return err
	})
}

// CreateSetupToken stores a one-time setup token (its hash) for a user.
func (db *Orgs) CreateSetupToken(ctx context.Context, tokenHash []byte, userID string, expires time.Time) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO setup_tokens (token_hash, user_id, expires_at) VALUES (?, ?, ?)",
			tokenHash, userID, sqldb.MS(expires))
		return err
	})
}

// UseSetupToken consumes a setup token valid at now and sets the user's
// password in the same transaction; an unknown, used or expired token is
// sqldb.ErrNotFound. It returns the user.
func (db *Orgs) UseSetupToken(ctx context.Context, tokenHash []byte, now time.Time, passwordHash string) (string, error) {
	var userID string
	err := db.authWrite(ctx, func(tx *sql.Tx) error {
		var expires int64
		err := tx.QueryRowContext(ctx, "DELETE FROM setup_tokens WHERE token_hash = ? RETURNING user_id, expires_at", tokenHash).
			Scan(&userID, &expires)
		if errors.Is(err, sql.ErrNoRows) || err == nil && expires <= sqldb.MS(now) {
			return fmt.Errorf("setup token: %w", sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE users SET password_hash = ? WHERE id = ?", passwordHash, userID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM sessions WHERE user_id = ?", userID)
		return err
	})
	return userID, err
}

// ClearLoginFailures forgets the failures of a scope (after a success).
func (db *Orgs) ClearLoginFailures(ctx context.Context, scope string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM login_failures WHERE scope = ?", scope)
		return err
	})
}

// SetUserRole changes a user's role; their keys and sessions act with it
// from their next request.
func (db *Orgs) SetUserRole(ctx context.Context, orgID, userID, role string) (User, error) {
	err := db.authWrite(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE users SET role = ? WHERE org_id = ? AND id = ?", role, orgID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user: %w", sqldb.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return User{}, err
	}
	return db.UserByID(ctx, orgID, userID)
}

// UserByID finds a user of an organization by id.
func (db *Orgs) UserByID(ctx context.Context, orgID, userID string) (User, error) {
	return db.oneUser(ctx, "WHERE org_id = ? AND id = ?", orgID, userID)
}

// RemoveUserByID removes a user of an organization by id; their keys and
// sessions go with them.
func (db *Orgs) RemoveUserByID(ctx context.Context, orgID, userID string) error {
	return db.authWrite(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM users WHERE org_id = ? AND id = ?", orgID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user: %w", sqldb.ErrNotFound)
		}
		return nil
	})
}
