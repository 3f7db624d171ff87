package convstore

import (
	"context"
)

// AppendVoiceTurn stores a turn of a call's conversation as AppendTurn
// does, without adding it to the call's transcript: agentd's own voice
// loop (app/voice) writes the transcript itself, line by line as it is
// heard, with only what was actually played of an interrupted answer.
func (s *Store) AppendVoiceTurn(ctx context.Context, orgID, convID string, msgs []Message) ([]Message, error) {
	return s.appendTurn(ctx, orgID, convID, msgs, false, nil)
}
