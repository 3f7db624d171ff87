// Package convstore is the SQL of conversations: conversations, their
// messages (a turn is written whole or not at all), the events
// conversation.started and conversation.ended in the same transactions,
// and the per-organization secret url tools are signed with.
package convstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Event types written here.
const (
	EventStarted = "conversation.started"
	EventEnded   = "conversation.ended"
)

// Store is the conversations store over the shared connection.
type Store struct {
	c   *sqldb.DB
	r   *sql.DB
	box sqldb.Sealer // tools secrets at rest (secrets.go)
}

// New returns the store over c; secrets stay as they are until UseSealer.
func New(c *sqldb.DB) *Store { return &Store{c: c, r: c.Reader(), box: sqldb.PlainText{}} }

// Conversation is one chat of an agent.
type Conversation struct {
	ID           string
	OrgID        string
	AgentID      string
	Channel      string // api, widget or voice
	Status       string // active or ended
	CallID       string // the voice call it belongs to ("" for none)
	Metadata     json.RawMessage
	MessageCount int
	CreatedAt    time.Time
	UpdatedAt    time.Time
	EndedAt      *time.Time
}

// Message is one stored message; Citations, ToolCalls and Usage are the
// JSON the feature gave.
type Message struct {
	ID             string
	ConversationID string
	Seq            int
	Role           string // user or assistant
	Content        string
	Citations      json.RawMessage
	ToolCalls      json.RawMessage
	Usage          json.RawMessage // nil on user messages
	CreatedAt      time.Time
}

const convCols = `id, org_id, agent_id, channel, status, call_id, metadata, message_count, created_at, updated_at, ended_at`

func scanConv(s sqldb.Scanner) (Conversation, error) {
	var c Conversation
	var callID sql.NullString
	var meta string
	var created, updated int64
	var ended sql.NullInt64
	if err := s.Scan(&c.ID, &c.OrgID, &c.AgentID, &c.Channel, &c.Status, &callID, &meta, &c.MessageCount,
		&created, &updated, &ended); err != nil {
		return c, err
	}
	c.CallID, c.Metadata = callID.String, json.RawMessage(meta)
	c.CreatedAt, c.UpdatedAt, c.EndedAt = sqldb.FromMS(created), sqldb.FromMS(updated), sqldb.OptMS(ended)
	return c, nil
}

func notFound(id string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("conversation %q: %w", id, sqldb.ErrNotFound)
	}
	return err
}

// Create stores a new conversation and its conversation.started event (a
// Snapshot of it).
// With a CallID it returns the call's conversation when one exists
// (created is false then, and no event is written).
func (s *Store) Create(ctx context.Context, c Conversation) (conv Conversation, created bool, err error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	c.ID, c.Status, c.CreatedAt, c.UpdatedAt = uuid.NewString(), "active", now, now
	if len(c.Metadata) == 0 {
		c.Metadata = json.RawMessage("{}")
	}
	err = s.c.Write(ctx, func(tx *sql.Tx) error {
		if c.CallID != "" {
			got, err := scanConv(tx.QueryRowContext(ctx, "SELECT "+convCols+" FROM conversations WHERE org_id = ? AND call_id = ?", c.OrgID, c.CallID))
			if err == nil {
				conv = got
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO conversations ("+convCols+") VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL)",
			c.ID, c.OrgID, c.AgentID, c.Channel, c.Status, sqldb.NullStr(c.CallID), string(c.Metadata),
			sqldb.MS(now), sqldb.MS(now)); err != nil {
			return err
		}
		conv, created = c, true
		_, err := s.c.InsertEvents(ctx, tx, []sqldb.PendingEvent{{Type: EventStarted, Subject: "conversation:" + c.ID,
			OrgID: c.OrgID, Data: Snapshot{Conversation: c}, Version: SnapshotVersion}})
		return err
	})
	if err != nil {
		return Conversation{}, false, fmt.Errorf("storage: create conversation: %w", err)
	}
	return conv, created, nil
}

// Get reads a conversation of the organization; another organization's is
// not found, like a missing one.
func (s *Store) Get(ctx context.Context, orgID, id string) (Conversation, error) {
	c, err := scanConv(s.r.QueryRowContext(ctx, "SELECT "+convCols+" FROM conversations WHERE id = ? AND org_id = ?", id, orgID))
	return c, notFound(id, err)
}

// Filter selects a page of conversations ("" is any).
type Filter struct {
	AgentID string
	Status  string
	Channel string     // api, widget or voice; "" for any (the dashboard's filter)
	From    *time.Time // created at or after
	To      *time.Time // created at or before
	Limit   int
	Offset  int
}

// List returns a page of the organization's conversations, newest first,
// and the total matching the filter.
func (s *Store) List(ctx context.Context, orgID string, f Filter) ([]Conversation, int, error) {
	where := " WHERE org_id = ?"
	args := []any{orgID}
	if f.AgentID != "" {
		where += " AND agent_id = ?"
		args = append(args, f.AgentID)
	}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, f.Status)
	}
	if f.Channel != "" {
		where += " AND channel = ?"
		args = append(args, f.Channel)
	}
	if f.From != nil {
		where += " AND created_at >= ?"
		args = append(args, sqldb.MS(*f.From))
	}
	if f.To != nil {
		where += " AND created_at <= ?"
		args = append(args, sqldb.MS(*f.To))
	}
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM conversations"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("storage: count conversations: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+convCols+" FROM conversations"+where+
		" ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?", append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("storage: list conversations: %w", err)
	}
	out, err := sqldb.Collect(rows, scanConv)
	return out, total, err
}

const msgCols = `id, conversation_id, seq, role, content, citations, tool_calls, usage, created_at`

// Messages reads a conversation's messages in order.
func (s *Store) Messages(ctx context.Context, convID string) ([]Message, error) {
	return messages(ctx, s.r, convID)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func messages(ctx context.Context, q querier, convID string) ([]Message, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+msgCols+" FROM conversation_messages WHERE conversation_id = ? ORDER BY seq", convID)
	if err != nil {
		return nil, fmt.Errorf("storage: conversation messages: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (Message, error) {
		var m Message
		var cites, calls string
		var usage sql.NullString
		var created int64
		err := sc.Scan(&m.ID, &m.ConversationID, &m.Seq, &m.Role, &m.Content, &cites, &calls, &usage, &created)
		m.Citations, m.ToolCalls = json.RawMessage(cites), json.RawMessage(calls)
		if usage.Valid {
			m.Usage = json.RawMessage(usage.String)
		}
		m.CreatedAt = sqldb.FromMS(created)
		return m, err
	})
}

// ErrEnded is appending to a conversation that has ended.
var ErrEnded = fmt.Errorf("conversation has ended: %w", sqldb.ErrConflict)

// AppendTurn stores a turn's messages (the user's and the answer) in one
// transaction, numbered after the ones already stored; IDs and times are
// set here and the stored messages returned.
func (s *Store) AppendTurn(ctx context.Context, orgID, convID string, msgs []Message) ([]Message, error) {
	return s.appendTurn(ctx, orgID, convID, msgs, true, nil)
}

// appendTurn is AppendTurn; with transcript false a call's turn is not
// added to the call's transcript (AppendVoiceTurn).
// also, when not nil, writes in the same transaction (a stored response).
func (s *Store) appendTurn(ctx context.Context, orgID, convID string, msgs []Message, transcript bool, also func(*sql.Tx) error) ([]Message, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	// The count is raised first: the UPDATE takes the conversation's row
	// lock, so concurrent turns of one conversation (from several
	// processes on PostgreSQL, at READ COMMITTED) number after each other
	// instead of reading the same count.
	err := s.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		var next int
		var callID sql.NullString
		err := tx.QueryRowContext(ctx, `UPDATE conversations SET message_count = message_count + ?, updated_at = ?
			WHERE id = ? AND org_id = ? AND status = 'active' RETURNING message_count, call_id`,
			len(msgs), sqldb.MS(now), convID, orgID).Scan(&next, &callID)
		if errors.Is(err, sql.ErrNoRows) {
			var status string
			if err := tx.QueryRowContext(ctx, "SELECT status FROM conversations WHERE id = ? AND org_id = ?", convID, orgID).Scan(&status); err != nil {
				return notFound(convID, err)
			}
			return ErrEnded
		}
		if err != nil {
			return err
		}
		count := next - len(msgs)
		for i := range msgs {
			m := &msgs[i]
			m.ID, m.ConversationID, m.Seq, m.CreatedAt = uuid.NewString(), convID, count+i, now
			if len(m.Citations) == 0 {
				m.Citations = json.RawMessage("[]")
			}
			if len(m.ToolCalls) == 0 {
				m.ToolCalls = json.RawMessage("[]")
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO conversation_messages ("+msgCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
				m.ID, convID, m.Seq, m.Role, m.Content, string(m.Citations), string(m.ToolCalls), sqldb.NullJSON(m.Usage), sqldb.MS(now)); err != nil {
				return err
			}
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		if callID.Valid && transcript { // a voice call's turns are its transcript too
			return appendCallTranscript(ctx, tx, callID.String, msgs, now)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: append turn: %w", err)
	}
	return msgs, nil
}

// End ends a conversation and writes conversation.ended with its
// transcript (a Snapshot with the messages). Ending an ended conversation changes nothing (and writes no
// second event).
func (s *Store) End(ctx context.Context, orgID, id string) (Conversation, error) {
	var c Conversation
	err := s.c.Write(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = scanConv(tx.QueryRowContext(ctx, "SELECT "+convCols+" FROM conversations WHERE id = ? AND org_id = ?", id, orgID))
		if err != nil {
			return notFound(id, err)
		}
		if c.Status == "ended" {
			return nil
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		if _, err := tx.ExecContext(ctx, "UPDATE conversations SET status = 'ended', ended_at = ?, updated_at = ? WHERE id = ?",
			sqldb.MS(now), sqldb.MS(now), id); err != nil {
			return err
		}
		c.Status, c.EndedAt, c.UpdatedAt = "ended", &now, now
		msgs, err := messages(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := analysisstore.EnqueueConversation(ctx, tx, id, now); err != nil { // issue 24
			return err
		}
		_, err = s.c.InsertEvents(ctx, tx, []sqldb.PendingEvent{{Type: EventEnded, Subject: "conversation:" + id,
			OrgID: orgID, Data: Snapshot{Conversation: c, Messages: msgs}, Version: SnapshotVersion}})
		return err
	})
	if err != nil {
		return Conversation{}, fmt.Errorf("storage: end conversation: %w", err)
	}
	return c, nil
}

// ToolsSecrets are the organization's tools secrets: the current one and,
// during the overlap after a rotation, the previous one (url tool calls
// are signed with both).
type ToolsSecrets struct {
	Secret, Previous string
	PreviousUntil    *time.Time // nil: no previous secret
}

// ToolsSecret reads the organization's tools secrets at now (a previous
// secret past its time is left out); sqldb.ErrNotFound when it has none:
// it is made only by RotateToolsSecret, which shows it.
func (s *Store) ToolsSecret(ctx context.Context, orgID string, now time.Time) (ToolsSecrets, error) {
	var cur string
	var prev sql.NullString
	var until sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT secret, prev_secret, prev_secret_until FROM org_tools_secrets WHERE org_id = ?",
		orgID).Scan(&cur, &prev, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return ToolsSecrets{}, fmt.Errorf("tools secret of %q: %w", orgID, sqldb.ErrNotFound)
	}
	if err != nil {
		return ToolsSecrets{}, fmt.Errorf("storage: tools secret: %w", err)
	}
	var out ToolsSecrets
	if out.Secret, err = s.open(cur); err != nil {
		return ToolsSecrets{}, err
	}
	if prev.Valid && until.Valid && until.Int64 > sqldb.MS(now) {
		if out.Previous, err = s.open(prev.String); err != nil {
			return ToolsSecrets{}, err
		}
		t := sqldb.FromMS(until.Int64)
		out.PreviousUntil = &t
	}
	return out, nil
}

func (s *Store) open(v string) (string, error) {
	plain, err := s.box.Open(v)
	if err != nil {
		return "", fmt.Errorf("storage: tools secret: %w", err)
	}
	return plain, nil
}

// RotateToolsSecret makes secret the organization's tools secret. The one
// it replaces stays valid until now+overlap (returned; nil when there was
// none): receivers verify either while they switch.
func (s *Store) RotateToolsSecret(ctx context.Context, orgID, secret string, now time.Time, overlap time.Duration) (*time.Time, error) {
	sealed, err := s.box.Seal(secret)
	if err != nil {
		return nil, err
	}
	until := now.Add(overlap).UTC().Truncate(time.Millisecond)
	var prevUntil *time.Time
	err = s.c.Write(ctx, func(tx *sql.Tx) error {
		var old string
		err := tx.QueryRowContext(ctx, "SELECT secret FROM org_tools_secrets WHERE org_id = ?", orgID).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, "INSERT INTO org_tools_secrets (org_id, secret, created_at) VALUES (?, ?, ?)",
				orgID, sealed, sqldb.MS(now))
			return err
		}
		if err != nil {
			return err
		}
		prevUntil = &until
		_, err = tx.ExecContext(ctx, `UPDATE org_tools_secrets SET prev_secret = secret, prev_secret_until = ?, secret = ?,
			created_at = ? WHERE org_id = ?`, sqldb.MS(until), sealed, sqldb.MS(now), orgID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("storage: rotate tools secret: %w", err)
	}
	return prevUntil, nil
}
