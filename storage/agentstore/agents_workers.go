package agentstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Worker is an agent as the workforce view (GET /api/v2/agents) shows it:
// no instructions, config or tools, but its call counters and jobs. The
// counters are kept by triggers on calls (migration 0007), so listing
// workers never scans the calls table.
type Worker struct {
	ID             string
	Name           string
	Type           string
	Status         string
	Model          string
	Specialty      string
	DisplayRole    string
	PhoneNumbers   []string
	LiveCalls      int64 // queued, connecting, ringing or active
	FinishedCalls  int64 // completed, failed, no_answer or busy
	CompletedCalls int64
	Jobs           []Job // oldest first
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ListWorkers returns every agent of the organization, newest first, with
// call counters and assigned jobs, read in one snapshot.
func (db *Agents) ListWorkers(ctx context.Context, orgID string) ([]Worker, error) {
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("storage: list workers: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, name, type, status, model, specialty, display_role, phone_numbers,
		live_calls, finished_calls, completed_calls, created_at, updated_at
		FROM agents WHERE org_id = ?`+agentOrder, orgID)
	if err != nil {
		return nil, fmt.Errorf("storage: list workers: %w", err)
	}
	out, err := sqldb.Collect(rows, scanWorker)
	if err != nil {
		return nil, fmt.Errorf("storage: list workers: %w", err)
	}
	index := make(map[string]int, len(out))
	for i, w := range out {
		index[w.ID] = i
	}
	jobs, err := queryJobs(ctx, tx, "SELECT "+jobColumns+" FROM agent_jobs WHERE org_id = ? ORDER BY created_at, rowid", orgID)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if i, ok := index[j.AgentID]; ok {
			out[i].Jobs = append(out[i].Jobs, j)
		}
	}
	return out, nil
}

// scanWorker reads a worker's agent columns; its jobs are added after.
func scanWorker(sc sqldb.Scanner) (Worker, error) {
	var w Worker
	var phones string
	var created, updated int64
	if err := sc.Scan(&w.ID, &w.Name, &w.Type, &w.Status, &w.Model, &w.Specialty, &w.DisplayRole, &phones,
		&w.LiveCalls, &w.FinishedCalls, &w.CompletedCalls, &created, &updated); err != nil {
		return w, err
	}
	if err := json.Unmarshal([]byte(phones), &w.PhoneNumbers); err != nil {
		return w, fmt.Errorf("agent %s phone numbers: %w", w.ID, err)
	}
	w.PhoneNumbers = sqldb.NonNil(w.PhoneNumbers)
	w.Jobs = []Job{}
	w.CreatedAt, w.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return w, nil
}
