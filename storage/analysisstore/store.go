// Package analysisstore is the SQL of post-call analysis: agents' analysis
// plans and the analyses table, which is at once the durable queue (rows
// pending, claimed with a lease) and the stored result. Enqueue runs inside
// the transaction of the change that ends a call or a conversation, so a
// crash between the end and the analysis loses nothing.
package analysisstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Subject kinds.
const (
	KindCall         = "call"
	KindConversation = "conversation"
)

// Statuses of an analysis.
const (
	StatusPending   = "pending"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusSkipped   = "skipped"
)

// Store is the analysis store over the shared connection.
type Store struct {
	c *sqldb.DB
	r *sql.DB
}

// New returns the store over c.
func New(c *sqldb.DB) *Store { return &Store{c: c, r: c.Reader()} }

// Analysis is one row: the queue state and the result.
type Analysis struct {
	Kind       string
	SubjectID  string
	OrgID      string
	AgentID    string
	BatchID    string
	Status     string
	Result     json.RawMessage // the feature's JSON; nil while never analysed
	Attempts   int
	DueAt      time.Time
	QueuedAt   time.Time
	AnalyzedAt *time.Time
}

const cols = `subject_kind, subject_id, org_id, agent_id, batch_id, status, result, attempts, due_at, queued_at, analyzed_at`

func scan(s sqldb.Scanner) (Analysis, error) {
	var a Analysis
	var batch, result sql.NullString
	var due, queued int64
	var analyzed sql.NullInt64
	if err := s.Scan(&a.Kind, &a.SubjectID, &a.OrgID, &a.AgentID, &batch, &a.Status, &result, &a.Attempts, &due, &queued, &analyzed); err != nil {
		return a, err
	}
	a.BatchID = batch.String
	if result.Valid {
		a.Result = json.RawMessage(result.String)
	}
	a.DueAt, a.QueuedAt, a.AnalyzedAt = sqldb.FromMS(due), sqldb.FromMS(queued), sqldb.OptMS(analyzed)
	return a, nil
}

// SavePlan stores an agent's plan (already validated); nil removes it. An
// agent of another organization is sqldb.ErrNotFound.
func (s *Store) SavePlan(ctx context.Context, orgID, agentID string, plan json.RawMessage) error {
	return s.c.Write(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM agents WHERE id = ? AND org_id = ?", agentID, orgID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("agent %q: %w", agentID, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return WritePlan(ctx, tx, orgID, agentID, plan)
	})
}

// WritePlan stores an agent's plan (already validated; nil removes it)
// inside tx, for the transaction that creates or updates the agent itself,
// which has checked the agent: the agent and its plan are written together
// or not at all.
func WritePlan(ctx context.Context, tx *sql.Tx, orgID, agentID string, plan json.RawMessage) error {
	var err error
	if plan == nil {
		_, err = tx.ExecContext(ctx, "DELETE FROM agent_analysis_plans WHERE agent_id = ?", agentID)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO agent_analysis_plans (agent_id, org_id, plan, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (agent_id) DO UPDATE SET plan = excluded.plan, updated_at = excluded.updated_at`,
			agentID, orgID, string(plan), sqldb.MS(time.Now()))
	}
	if err != nil {
		return fmt.Errorf("storage: write analysis plan: %w", err)
	}
	return nil
}

// Plan reads an agent's plan: nil when it has none; sqldb.ErrNotFound for
// an agent that is not the organization's.
func (s *Store) Plan(ctx context.Context, orgID, agentID string) (json.RawMessage, error) {
	var plan sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT p.plan FROM agents a LEFT JOIN agent_analysis_plans p ON p.agent_id = a.id
		WHERE a.id = ? AND a.org_id = ?`, agentID, orgID).Scan(&plan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("agent %q: %w", agentID, sqldb.ErrNotFound)
	}
	if err != nil || !plan.Valid {
		return nil, err
	}
	return json.RawMessage(plan.String), nil
}

// upsert (re)queues the subjects the select yields (kind, id, org, agent,
// batch): a subject analysed before goes back to pending.
const upsert = ` ON CONFLICT (subject_kind, subject_id) DO UPDATE SET status = 'pending', attempts = 0,
	due_at = excluded.due_at, queued_at = excluded.queued_at, lease_owner = NULL, lease_until = NULL`

// EnqueueCall queues the call's analysis inside tx when its agent has a
// plan (nothing otherwise). Callers run it in the transaction that records
// the call's transcript.
func EnqueueCall(ctx context.Context, tx *sql.Tx, callID string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO analyses (subject_kind, subject_id, org_id, agent_id, batch_id, status, due_at, queued_at)
		SELECT 'call', c.id, c.org_id, c.agent_id, c.batch_id, 'pending', ?, ? FROM calls c
		JOIN agent_analysis_plans p ON p.agent_id = c.agent_id WHERE c.id = ?`+upsert, sqldb.MS(now), sqldb.MS(now), callID)
	if err != nil {
		return fmt.Errorf("storage: queue call analysis: %w", err)
	}
	return nil
}

// EnqueueConversation queues the conversation's analysis inside tx when its
// agent has a plan; run in the transaction that ends it. A call's
// conversation is analysed as the call (its transcript), not twice.
func EnqueueConversation(ctx context.Context, tx *sql.Tx, convID string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO analyses (subject_kind, subject_id, org_id, agent_id, batch_id, status, due_at, queued_at)
		SELECT 'conversation', c.id, c.org_id, c.agent_id, NULL, 'pending', ?, ? FROM conversations c
		JOIN agent_analysis_plans p ON p.agent_id = c.agent_id WHERE c.id = ? AND c.call_id IS NULL`+upsert, sqldb.MS(now), sqldb.MS(now), convID)
	if err != nil {
		return fmt.Errorf("storage: queue conversation analysis: %w", err)
	}
	return nil
}

// CallFilter selects calls of an organization to analyse again.
type CallFilter struct {
	IDs     []string // these calls
	BatchID string   // or the calls of this batch
	AgentID string   // or the agent's calls (with Status, optional)
	Status  string
}

// Reanalyze queues again the organization's calls the filter selects that
// have a transcript and whose agent has a plan; n is how many.
func (s *Store) Reanalyze(ctx context.Context, orgID string, f CallFilter) (n int, err error) {
	where, args := " WHERE c.org_id = ?", []any{orgID}
	switch {
	case len(f.IDs) > 0:
		where += " AND c.id IN (" + sqldb.Placeholders("?", len(f.IDs)) + ")"
		for _, id := range f.IDs {
			args = append(args, id)
		}
	case f.BatchID != "":
		where += " AND c.batch_id = ?"
		args = append(args, f.BatchID)
	case f.AgentID != "":
		where += " AND c.agent_id = ?"
		args = append(args, f.AgentID)
	default:
		return 0, fmt.Errorf("analysis filter: give ids, a batch or an agent: %w", sqldb.ErrConflict)
	}
	if f.Status != "" {
		where += " AND c.status = ?"
		args = append(args, f.Status)
	}
	now := sqldb.MS(time.Now())
	err = s.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO analyses (subject_kind, subject_id, org_id, agent_id, batch_id, status, due_at, queued_at)
			SELECT 'call', c.id, c.org_id, c.agent_id, c.batch_id, 'pending', ?, ? FROM calls c
			JOIN agent_analysis_plans p ON p.agent_id = c.agent_id
			JOIN call_results r ON r.call_id = c.id AND (r.transcript IS NOT NULL
			OR EXISTS (SELECT 1 FROM call_transcript_lines l WHERE l.call_id = c.id))`+where+upsert,
			append([]any{now, now}, args...)...)
		if err != nil {
			return err
		}
		m, err := res.RowsAffected()
		n = int(m)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("storage: reanalyze: %w", err)
	}
	return n, nil
}

// Get reads the analysis of the organization's subject; sqldb.ErrNotFound
// when there is none (another organization's included).
func (s *Store) Get(ctx context.Context, orgID, kind, id string) (Analysis, error) {
	a, err := scan(s.r.QueryRowContext(ctx, "SELECT "+cols+" FROM analyses WHERE subject_kind = ? AND subject_id = ? AND org_id = ?", kind, id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("analysis of %s %q: %w", kind, id, sqldb.ErrNotFound)
	}
	return a, err
}

// List reads the organization's analyses of a batch (every call of it that
// was queued), for progress and the batch page.
func (s *Store) List(ctx context.Context, orgID, batchID string) ([]Analysis, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+cols+" FROM analyses WHERE org_id = ? AND batch_id = ? ORDER BY queued_at, subject_id", orgID, batchID)
	if err != nil {
		return nil, fmt.Errorf("storage: list analyses: %w", err)
	}
	return sqldb.Collect(rows, scan)
}

// EnqueueEndedCalls queues, inside the transaction that ends them, the
// calls whose agent has a plan and that have a transcript (recorded
// through the OpenAI-compatible endpoint or posted before the end). A call
// already queued or analysed is left as it is: its transcript's POST
// queued it.
func EnqueueEndedCalls(ctx context.Context, tx *sql.Tx, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{sqldb.MS(now), sqldb.MS(now)}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO analyses (subject_kind, subject_id, org_id, agent_id, batch_id, status, due_at, queued_at)
		SELECT 'call', c.id, c.org_id, c.agent_id, c.batch_id, 'pending', ?, ? FROM calls c
		JOIN agent_analysis_plans p ON p.agent_id = c.agent_id
		JOIN call_results r ON r.call_id = c.id AND (r.transcript IS NOT NULL
			OR EXISTS (SELECT 1 FROM call_transcript_lines l WHERE l.call_id = c.id))
		WHERE c.id IN (`+sqldb.Placeholders("?", len(ids))+`) ON CONFLICT (subject_kind, subject_id) DO NOTHING`, args...)
	if err != nil {
		return fmt.Errorf("storage: queue ended calls' analysis: %w", err)
	}
	return nil
}
