package convstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Response is a stored answer of the Responses API: the whole context
// after it (Messages, the feature's JSON), so a next request naming it as
// previous_response_id continues from there, in its conversation.
type Response struct {
	ID             string
	OrgID          string
	AgentID        string
	ConversationID string
	Messages       json.RawMessage
	CreatedAt      time.Time
}

// AppendResponseTurn is AppendTurn that also stores r, in the same
// transaction: a response is never stored without its turn, nor a turn
// without the response that names it.
func (s *Store) AppendResponseTurn(ctx context.Context, orgID, convID string, msgs []Message, r Response) ([]Message, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return s.appendTurn(ctx, orgID, convID, msgs, true, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO openai_responses (id, org_id, agent_id, conversation_id, messages, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, r.ID, orgID, r.AgentID, convID, string(r.Messages), sqldb.MS(now))
		return err
	})
}

// GetResponse reads a stored response of the organization; another
// organization's is not found, like a missing one.
func (s *Store) GetResponse(ctx context.Context, orgID, id string) (Response, error) {
	var r Response
	var msgs string
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT id, org_id, agent_id, conversation_id, messages, created_at
		FROM openai_responses WHERE id = ? AND org_id = ?`, id, orgID).Scan(&r.ID, &r.OrgID, &r.AgentID, &r.ConversationID, &msgs, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("response %q: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("storage: response: %w", err)
	}
	r.Messages, r.CreatedAt = json.RawMessage(msgs), sqldb.FromMS(created)
	return r, nil
}
