package convstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentd/agentd/storage/callstore"
)

// appendCallTranscript adds a turn of the call's voice conversation to the
// call's own transcript, inside the turn's transaction, so GET
// /api/v1/calls/{id} and the call's analysis see it without a result
// POST. Each message is one appended line (callstore): the turn writes
// its own size, never the whole transcript again.
func appendCallTranscript(ctx context.Context, tx *sql.Tx, callID string, msgs []Message, now time.Time) error {
	lines := make([]callstore.TranscriptLine, 0, len(msgs))
	for _, m := range msgs {
		role := "user"
		if m.Role == "assistant" {
			role = "agent"
		}
		lines = append(lines, callstore.TranscriptLine{Role: role, Text: m.Content, At: now})
	}
	return callstore.AppendTranscriptTx(ctx, tx, callID, lines, now)
}
