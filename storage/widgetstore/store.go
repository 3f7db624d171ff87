// Package widgetstore is the SQL of the chat widget: the server-wide key
// visitor tokens are signed with, and each agent's daily message count and
// each address's share of it (counted in the database so several
// processes share one cap).
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

// Refusal says which daily count a message did not fit in.
type Refusal int

// The answers of CountMessage.
const (
	Counted     Refusal = iota // counted in both
	AgentFull                  // the agent's day is used up
	AddressFull                // this address used its share of the agent's day
)

// errAddressFull rolls back the agent's count when the address's is full.
var errAddressFull = errors.New("address share used")

// CountMessage counts one message of the agent on day, and of address on
// the agent's day, when fewer than limit and perAddress were counted; else
// nothing is counted. Each count is one conditional upsert in one
// transaction, so processes on one database cannot both take the last
// message. A message is never given back: it is counted before the model
// is asked, whatever becomes of the turn.
func (s *Store) CountMessage(ctx context.Context, agentID, address, day string, limit, perAddress int) (Refusal, error) {
	var r Refusal
	err := s.c.Write(ctx, func(tx *sql.Tx) error {
		r = Counted
		res, err := tx.ExecContext(ctx, `INSERT INTO widget_daily_counts (agent_id, day, count) VALUES (?, ?, 1)
			ON CONFLICT (agent_id, day) DO UPDATE SET count = widget_daily_counts.count + 1
			WHERE widget_daily_counts.count < ?`, agentID, day, limit)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			r = AgentFull
			return err
		}
		res, err = tx.ExecContext(ctx, `INSERT INTO widget_address_counts (agent_id, day, address, count) VALUES (?, ?, ?, 1)
			ON CONFLICT (agent_id, day, address) DO UPDATE SET count = widget_address_counts.count + 1
			WHERE widget_address_counts.count < ?`, agentID, day, address, perAddress)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			r = AddressFull
			return errors.Join(err, errAddressFull)
		}
		return nil
	})
	if errors.Is(err, errAddressFull) && r == AddressFull {
		return AddressFull, nil
	}
	if err != nil {
		return 0, fmt.Errorf("storage: count widget message: %w", err)
	}
	return r, nil
}

// PruneAddresses deletes the per-address counts of days before day; it
// reads first, so a process with nothing to delete writes nothing.
func (s *Store) PruneAddresses(ctx context.Context, day string) error {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM widget_address_counts WHERE day < ? LIMIT 1) AS old", day).Scan(&n); err != nil || n == 0 {
		return err
	}
	return s.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM widget_address_counts WHERE day < ?", day)
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
