package callstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// EventCallTranscript is a line of a call's transcript as agentd's voice
// loop hears it, live: its data is {callId, agentId, role, text, at,
// interrupted}. Webhooks get it only when they list it (not with "*").
const EventCallTranscript = "call.transcript"

// TalkerCall reads a call by id whatever its organization: agentd's own
// voice loop is handed an answered call by the dialer, which knows only
// its id for an inbound call.
func (db *Calls) TalkerCall(ctx context.Context, id string) (Call, error) {
	c, err := scanCall(db.r.QueryRowContext(ctx, "SELECT "+callColumns+callFrom+" WHERE c.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Call{}, fmt.Errorf("call %q: %w", id, sqldb.ErrNotFound)
	}
	return c, err
}

// CallLatency is a voice call's latency (app/voice renders Turns).
type CallLatency struct {
	Turns        json.RawMessage // JSON array of the turns' figures
	P50Ms, P95Ms int64           // voice-to-voice
}

// SaveCallLatency writes (or replaces) a call's latency.
func (db *Calls) SaveCallLatency(ctx context.Context, callID string, l CallLatency) error {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO call_latency (call_id, turns, p50_ms, p95_ms, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (call_id) DO UPDATE SET turns = excluded.turns, p50_ms = excluded.p50_ms, p95_ms = excluded.p95_ms,
			updated_at = excluded.updated_at`, callID, string(l.Turns), l.P50Ms, l.P95Ms, sqldb.MS(time.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("storage: save call latency: %w", err)
	}
	return nil
}

// GetCallLatency reads a call's latency; ok is false when it has none.
func (db *Calls) GetCallLatency(ctx context.Context, callID string) (l CallLatency, ok bool, err error) {
	var turns string
	err = db.r.QueryRowContext(ctx, "SELECT turns, p50_ms, p95_ms FROM call_latency WHERE call_id = ?", callID).
		Scan(&turns, &l.P50Ms, &l.P95Ms)
	if errors.Is(err, sql.ErrNoRows) {
		return CallLatency{}, false, nil
	}
	if err != nil {
		return CallLatency{}, false, fmt.Errorf("storage: read call latency: %w", err)
	}
	l.Turns = json.RawMessage(turns)
	return l, true, nil
}

// TranscriptEvent is the data of call.transcript: one line of a call's
// transcript as agentd's voice loop heard it.
type TranscriptEvent struct {
	CallID      string `json:"callId"`
	AgentID     string `json:"agentId"`
	Role        string `json:"role"`
	Text        string `json:"text"`
	At          string `json:"at"`
	Interrupted bool   `json:"interrupted"`
}

// AppendLiveTranscript appends lines to a call's transcript
// (AppendTranscript) and logs a call.transcript event for each in the same
// transaction: the event stream and the dashboard's live call page show
// exactly the lines kept.
func (db *Calls) AppendLiveTranscript(ctx context.Context, orgID, agentID, callID string, lines []TranscriptLine) error {
	if len(lines) == 0 {
		return nil
	}
	now := time.Now()
	evs := make([]sqldb.PendingEvent, 0, len(lines))
	for _, l := range lines {
		evs = append(evs, sqldb.PendingEvent{Type: EventCallTranscript, Subject: "call:" + callID, OrgID: orgID,
			Data: TranscriptEvent{CallID: callID, AgentID: agentID, Role: l.Role, Text: l.Text,
				At: l.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Interrupted: l.Interrupted}})
	}
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		if err := AppendTranscriptTx(ctx, tx, callID, lines, now); err != nil {
			return err
		}
		_, err := db.c.InsertEvents(ctx, tx, evs)
		return err
	})
	if err != nil {
		return fmt.Errorf("storage: live call transcript: %w", err)
	}
	return nil
}
