package convstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/storage/sqldb"
)

// AppendVoiceTurn stores a turn of a call's conversation as AppendTurn
// does, without adding it to the call's transcript: agentd's own voice
// loop (app/voice) writes the transcript itself, line by line as it is
// heard, with only what was actually played of an interrupted answer.
func (s *Store) AppendVoiceTurn(ctx context.Context, orgID, convID string, msgs []Message) ([]Message, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	err := s.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		var next int
		err := tx.QueryRowContext(ctx, `UPDATE conversations SET message_count = message_count + ?, updated_at = ?
			WHERE id = ? AND org_id = ? AND status = 'active' RETURNING message_count`,
			len(msgs), sqldb.MS(now), convID, orgID).Scan(&next)
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
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: append voice turn: %w", err)
	}
	return msgs, nil
}
