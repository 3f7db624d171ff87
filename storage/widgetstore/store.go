// Package widgetstore is the SQL of the chat widget: the server-wide key
// visitor tokens are signed with, and each agent's daily message count
// (counted in the database so several processes share one cap).
package widgetstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Store is the widget store over the shared connection.
type Store struct {
	c *sqldb.DB
	r *sql.DB
}

// New returns the store over c.
func New(c *sqldb.DB) *Store { return &Store{c: c, r: c.Reader()} }

// Secret is the signing key, created with fresh on first use (by whichever
// process gets there first; the others read the same one).
func (s *Store) Secret(ctx context.Context, fresh func() string) (string, error) {
	var secret string
	err := s.r.QueryRowContext(ctx, "SELECT secret FROM widget_secret WHERE id = 1").Scan(&secret)
	if err == nil {
		return secret, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("storage: widget secret: %w", err)
	}
	err = s.c.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO widget_secret (id, secret, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING",
			fresh(), sqldb.MS(time.Now())); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT secret FROM widget_secret WHERE id = 1").Scan(&secret)
	})
	if err != nil {
		return "", fmt.Errorf("storage: create widget secret: %w", err)
	}
	return secret, nil
}

// RotateSecret replaces the signing key: every visitor token signed with
// the old one stops working.
func (s *Store) RotateSecret(ctx context.Context, secret string) error {
	return s.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO widget_secret (id, secret, created_at) VALUES (1, ?, ?)
			ON CONFLICT (id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at`,
			secret, sqldb.MS(time.Now()))
		return err
	})
}

// CountMessage counts one message of the agent on day when fewer than
// limit were counted; false when the cap is reached. One statement, so two
// processes cannot both take the last message.
func (s *Store) CountMessage(ctx context.Context, agentID, day string, limit int) (bool, error) {
	var ok bool
	err := s.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO widget_daily_counts (agent_id, day, count) VALUES (?, ?, 1)
			ON CONFLICT (agent_id, day) DO UPDATE SET count = widget_daily_counts.count + 1
			WHERE widget_daily_counts.count < ?`, agentID, day, limit)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		ok = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("storage: count widget message: %w", err)
	}
	return ok, nil
}

// Uncount gives back a message counted for a turn that failed.
func (s *Store) Uncount(ctx context.Context, agentID, day string) error {
	return s.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE widget_daily_counts SET count = count - 1 WHERE agent_id = ? AND day = ? AND count > 0", agentID, day)
		return err
	})
}

// ConversationAgent is the organization and agent of a widget
// conversation, for the CORS preflight (which carries no token); not found
// when there is none or it came through another channel.
func (s *Store) ConversationAgent(ctx context.Context, id string) (orgID, agentID string, err error) {
	err = s.r.QueryRowContext(ctx, "SELECT org_id, agent_id FROM conversations WHERE id = ? AND channel = 'widget'", id).Scan(&orgID, &agentID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", fmt.Errorf("conversation %q: %w", id, sqldb.ErrNotFound)
	}
	return orgID, agentID, err
}
