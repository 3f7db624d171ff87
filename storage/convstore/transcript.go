package convstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// maxCallTranscript is the call result's transcript limit (app/calls):
// turns past it stay in the conversation only.
const maxCallTranscript = 2000

// transcriptItem is one turn of a call's transcript, as app/calls stores
// it: role agent or user, the text, and the time in RFC 3339 UTC with
// milliseconds.
type transcriptItem struct {
	Role string `json:"role"`
	Text string `json:"text"`
	At   string `json:"at"`
}

// appendCallTranscript adds a turn of the call's voice conversation to the
// call's own transcript (call_results), inside the turn's transaction, so
// GET /api/v1/calls/{id} and the call's analysis see it without a result
// POST.
func appendCallTranscript(ctx context.Context, tx *sql.Tx, pg bool, callID string, msgs []Message, now time.Time) error {
	var raw sql.NullString
	q := "SELECT transcript FROM call_results WHERE call_id = ?"
	if pg { // read-modify-write at READ COMMITTED: hold the row meanwhile
		q += " FOR UPDATE"
	}
	err := tx.QueryRowContext(ctx, q, callID).Scan(&raw)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	items := []transcriptItem{}
	if raw.Valid && raw.String != "" {
		if err := json.Unmarshal([]byte(raw.String), &items); err != nil {
			return err
		}
	}
	at := now.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	for _, m := range msgs {
		if len(items) >= maxCallTranscript {
			break
		}
		role := "user"
		if m.Role == "assistant" {
			role = "agent"
		}
		items = append(items, transcriptItem{Role: role, Text: m.Content, At: at})
	}
	b, err := json.Marshal(items)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO call_results (call_id, transcript, created_at, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (call_id) DO UPDATE SET transcript = excluded.transcript, updated_at = excluded.updated_at`,
		callID, string(b), sqldb.MS(now), sqldb.MS(now))
	return err
}
