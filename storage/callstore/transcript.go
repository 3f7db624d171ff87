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

// MaxTranscriptLines is how many lines a call's transcript keeps (the
// limit of a worker's posted transcript too): lines appended past it are
// dropped, the conversation keeps them.
const MaxTranscriptLines = 2000

// TranscriptLine is one line of a call's transcript: who spoke (agent,
// user or tool; a worker's posted transcript may also say system), what
// was said, when, and whether the agent was cut off while saying it.
type TranscriptLine struct {
	Role, Text  string
	At          time.Time
	Interrupted bool
}

// AppendTranscript adds lines to the call's transcript, after the ones
// already there, each as one row: a turn costs the size of its lines, not
// of the whole transcript (rewriting the whole JSON array each turn wrote
// 544 MB of WAL for 30 turns of 1.2 MB). Lines past MaxTranscriptLines
// are dropped. An unknown call is sqldb.ErrNotFound. The voice loop calls
// it live during calls; the OpenAI-compatible endpoint's turns too.
func (db *Calls) AppendTranscript(ctx context.Context, callID string, lines []TranscriptLine) error {
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		return AppendTranscriptTx(ctx, tx, callID, lines, time.Now())
	})
	if err != nil {
		return fmt.Errorf("storage: append transcript: %w", err)
	}
	return nil
}

// AppendTranscriptTx is AppendTranscript inside tx (a conversation turn's
// transaction, storage/convstore), at now. tx may be READ COMMITTED on
// PostgreSQL: the call's result row is locked before the last line is read.
func AppendTranscriptTx(ctx context.Context, tx *sql.Tx, callID string, lines []TranscriptLine, now time.Time) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM calls WHERE id = ?", callID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("call %q: %w", callID, sqldb.ErrNotFound)
	}
	if err != nil {
		return err
	}
	// The result row says the call has a result (GET shows it) and, being
	// written first, serializes appends to one call (the seq below).
	at := sqldb.MS(now)
	if _, err := tx.ExecContext(ctx, `INSERT INTO call_results (call_id, created_at, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (call_id) DO UPDATE SET updated_at = excluded.updated_at`, callID, at, at); err != nil {
		return err
	}
	var next int
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(seq) + 1, 0) FROM call_transcript_lines WHERE call_id = ?",
		callID).Scan(&next); err != nil {
		return err
	}
	for _, l := range lines {
		if next >= MaxTranscriptLines {
			break
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO call_transcript_lines (call_id, seq, role, text, at, interrupted)
			VALUES (?, ?, ?, ?, ?, ?)`, callID, next, l.Role, l.Text, sqldb.MS(l.At), boolInt(l.Interrupted)); err != nil {
			return err
		}
		next++
	}
	return nil
}

// Transcript reads the call's appended lines in order (none: empty).
func (db *Calls) Transcript(ctx context.Context, callID string) ([]TranscriptLine, error) {
	lines, err := transcriptLines(ctx, db.r, callID)
	if err != nil {
		return nil, fmt.Errorf("storage: call transcript: %w", err)
	}
	return lines, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func transcriptLines(ctx context.Context, q querier, callID string) ([]TranscriptLine, error) {
	rows, err := q.QueryContext(ctx, `SELECT role, text, at, interrupted FROM call_transcript_lines
		WHERE call_id = ? ORDER BY seq`, callID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TranscriptLine
	for rows.Next() {
		var l TranscriptLine
		var at, interrupted int64
		if err := rows.Scan(&l.Role, &l.Text, &at, &interrupted); err != nil {
			return nil, err
		}
		l.At, l.Interrupted = sqldb.FromMS(at), interrupted != 0
		out = append(out, l)
	}
	return out, rows.Err()
}

// lineJSON is a transcript line as the call's transcript shows it: the
// {role, text, at} of a posted transcript, interrupted only when true.
type lineJSON struct {
	Role        string `json:"role"`
	Text        string `json:"text"`
	At          string `json:"at"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

// transcriptJSON renders lines as the call's transcript JSON array.
func transcriptJSON(lines []TranscriptLine) (json.RawMessage, error) {
	out := make([]lineJSON, len(lines))
	for i, l := range lines {
		out[i] = lineJSON{Role: l.Role, Text: l.Text, At: l.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Interrupted: l.Interrupted}
	}
	return json.Marshal(out)
}

// withLines fills r.Transcript from the call's lines when no transcript
// was posted: a worker's whole-transcript POST is its final word and is
// shown as posted; until then the appended lines are the transcript.
func withLines(ctx context.Context, q querier, r *CallResult) error {
	if r.Transcript != nil {
		return nil
	}
	lines, err := transcriptLines(ctx, q, r.CallID)
	if err != nil || len(lines) == 0 {
		return err
	}
	r.Transcript, err = transcriptJSON(lines)
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
