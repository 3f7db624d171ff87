package orgstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// LoginAttempts is what the sign-in throttle knows of one scope: the
// attempts not yet forgiven since the window began, and the latest.
type LoginAttempts struct {
	N    int
	Last time.Time
}

// AdmitLogin decides and records a sign-in attempt in one write
// transaction (writes are serialised on both backends), so parallel
// attempts see each other: wait gets each scope's attempts since `since`
// and says how long the caller must wait; zero admits the attempt, which
// is recorded under every scope before the password is checked. Rows older
// than since are forgotten on the way.
func (db *Orgs) AdmitLogin(ctx context.Context, now, since time.Time, scopes []string, wait func([]LoginAttempts) time.Duration) (time.Duration, error) {
	var d time.Duration
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		seen := make([]LoginAttempts, len(scopes))
		for i, sc := range scopes {
			var last sql.NullInt64
			if err := tx.QueryRowContext(ctx, "SELECT count(*), max(at) FROM login_failures WHERE scope = ? AND at >= ?",
				sc, sqldb.MS(since)).Scan(&seen[i].N, &last); err != nil {
				return err
			}
			if last.Valid {
				seen[i].Last = time.UnixMilli(last.Int64).UTC()
			}
		}
		if d = wait(seen); d > 0 {
			return nil
		}
		for _, sc := range scopes {
			if _, err := tx.ExecContext(ctx, "INSERT INTO login_failures (scope, at) VALUES (?, ?)", sc, sqldb.MS(now)); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM login_failures WHERE at < ?", sqldb.MS(since))
		return err
	})
	return d, err
}

// ForgetLoginAttempt removes the attempt recorded at `at` under each scope
// (a sign-in that succeeded is not a failure).
func (db *Orgs) ForgetLoginAttempt(ctx context.Context, at time.Time, scopes ...string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		for _, sc := range scopes {
			if _, err := tx.ExecContext(ctx, "DELETE FROM login_failures WHERE scope = ? AND at = ?", sc, sqldb.MS(at)); err != nil {
				return err
			}
		}
		return nil
	})
}
