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

// Answered-by verdicts of answering-machine detection (app/voice/amd).
const (
	AnsweredHuman   = "human"
	AnsweredMachine = "machine"
	AnsweredUnknown = "unknown"
)

// CallControl is what agentd's own voice loop decided on a call: who
// answered it and the transfers it attempted.
type CallControl struct {
	AnsweredBy string          // "" when not detected
	DecisionMs int64           // audio heard before the verdict
	Transfers  json.RawMessage // JSON array, app/voice renders it
}

// SaveAnsweredBy records who answered an outbound call. A machine also
// makes the call's result outcome voicemail, in the same transaction: the
// dial queue then records the attempt as voicemail and retries it when
// its retryConfig says so (retryOnVoicemail), as for a worker's result.
func (db *Calls) SaveAnsweredBy(ctx context.Context, callID, answeredBy string, decision time.Duration, now time.Time) error {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		at := sqldb.MS(now)
		if _, err := tx.ExecContext(ctx, `INSERT INTO call_control (call_id, answered_by, decision_ms, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (call_id) DO UPDATE SET answered_by = excluded.answered_by, decision_ms = excluded.decision_ms,
			updated_at = excluded.updated_at`, callID, answeredBy, decision.Milliseconds(), at); err != nil {
			return err
		}
		if answeredBy != AnsweredMachine {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO call_results (call_id, outcome, created_at, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (call_id) DO UPDATE SET outcome = excluded.outcome, updated_at = excluded.updated_at`,
			callID, OutcomeVoicemail, at, at); err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, EventCallResult, []string{callID})
	})
	if err != nil {
		return fmt.Errorf("storage: save answered by: %w", err)
	}
	return nil
}

// Events of transfers by agentd's voice loop.
const (
	EventCallTransferred    = "call.transferred"
	EventCallTransferFailed = "call.transfer_failed"
)

// AppendTransfer adds one transfer attempt (a JSON object) to the call's
// list and writes its event (EventCallTransferred or
// EventCallTransferFailed) in the same transaction.
func (db *Calls) AppendTransfer(ctx context.Context, callID string, attempt json.RawMessage, event string, now time.Time) error {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var raw string
		err := tx.QueryRowContext(ctx, "SELECT transfers FROM call_control WHERE call_id = ?", callID).Scan(&raw)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var list []json.RawMessage
		if raw != "" {
			json.Unmarshal([]byte(raw), &list)
		}
		b, err := json.Marshal(append(list, attempt))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO call_control (call_id, transfers, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (call_id) DO UPDATE SET transfers = excluded.transfers, updated_at = excluded.updated_at`,
			callID, string(b), sqldb.MS(now))
		if err != nil {
			return err
		}
		return db.emitCalls(ctx, tx, event, []string{callID})
	})
	if err != nil {
		return fmt.Errorf("storage: append transfer: %w", err)
	}
	return nil
}

// GetCallControl reads a call's control record; ok is false when it has
// none.
func (db *Calls) GetCallControl(ctx context.Context, callID string) (c CallControl, ok bool, err error) {
	var by sql.NullString
	var ms sql.NullInt64
	var transfers string
	err = db.r.QueryRowContext(ctx, "SELECT answered_by, decision_ms, transfers FROM call_control WHERE call_id = ?", callID).
		Scan(&by, &ms, &transfers)
	if errors.Is(err, sql.ErrNoRows) {
		return CallControl{}, false, nil
	}
	if err != nil {
		return CallControl{}, false, fmt.Errorf("storage: read call control: %w", err)
	}
	return CallControl{AnsweredBy: by.String, DecisionMs: ms.Int64, Transfers: json.RawMessage(transfers)}, true, nil
}
