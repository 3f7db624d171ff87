package agentstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// Job is a piece of work assigned to one agent (the v2 worker's
// assignedJobs): status active|paused, triggerType manual|schedule|
// inbound_call|outbound_campaign|webhook, trustLevel supervised|
// semi_autonomous|autonomous. app validates the values; the schema checks
// them again.
type Job struct {
	ID          string
	OrgID       string
	AgentID     string
	Name        string
	Status      string
	TriggerType string
	TrustLevel  string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const jobColumns = "id, org_id, agent_id, name, status, trigger_type, trust_level, created_at, updated_at"

// CreateJob stores a job for an agent of the same organization; an agent of
// another organization (or none) is sqldb.ErrNotFound.
func (db *Agents) CreateJob(ctx context.Context, j Job) (Job, error) {
	j.ID = uuid.NewString()
	now := time.Now().UTC().Truncate(time.Millisecond)
	j.CreatedAt, j.UpdatedAt = now, now
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		if err := agentInOrg(ctx, tx, j.OrgID, j.AgentID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO agent_jobs ("+jobColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			j.ID, j.OrgID, j.AgentID, j.Name, j.Status, j.TriggerType, j.TrustLevel, sqldb.MS(j.CreatedAt), sqldb.MS(j.UpdatedAt))
		return err
	})
	if err != nil {
		return Job{}, err
	}
	return j, nil
}

// GetJob reads one job of the organization.
func (db *Agents) GetJob(ctx context.Context, orgID, id string) (Job, error) {
	j, err := scanJob(db.r.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM agent_jobs WHERE id = ? AND org_id = ?", id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("job %q: %w", id, sqldb.ErrNotFound)
	}
	return j, err
}

// ListJobs returns the organization's jobs, newest first; a non-empty
// agentID keeps that agent's only.
func (db *Agents) ListJobs(ctx context.Context, orgID, agentID string) ([]Job, error) {
	q := "SELECT " + jobColumns + " FROM agent_jobs WHERE org_id = ?"
	args := []any{orgID}
	if agentID != "" {
		q += " AND agent_id = ?"
		args = append(args, agentID)
	}
	return queryJobs(ctx, db.r, q+" ORDER BY created_at DESC, rowid DESC", args...)
}

// UpdateJob reads the organization's job, lets change edit it and writes
// it back in one transaction. A changed AgentID must name an agent of the
// same organization (else sqldb.ErrNotFound).
func (db *Agents) UpdateJob(ctx context.Context, orgID, id string, change func(*Job) error) (Job, error) {
	var j Job
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var err error
		j, err = scanJob(tx.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM agent_jobs WHERE id = ? AND org_id = ?", id, orgID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("job %q: %w", id, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		before := j.AgentID
		if err := change(&j); err != nil {
			return err
		}
		if j.AgentID != before {
			if err := agentInOrg(ctx, tx, orgID, j.AgentID); err != nil {
				return err
			}
		}
		j.UpdatedAt = time.Now().UTC().Truncate(time.Millisecond)
		_, err = tx.ExecContext(ctx, `UPDATE agent_jobs SET agent_id = ?, name = ?, status = ?, trigger_type = ?,
			trust_level = ?, updated_at = ? WHERE id = ? AND org_id = ?`,
			j.AgentID, j.Name, j.Status, j.TriggerType, j.TrustLevel, sqldb.MS(j.UpdatedAt), id, orgID)
		return err
	})
	if err != nil {
		return Job{}, err
	}
	return j, nil
}

// DeleteJob removes a job of the organization.
func (db *Agents) DeleteJob(ctx context.Context, orgID, id string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM agent_jobs WHERE id = ? AND org_id = ?", id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("job %q: %w", id, sqldb.ErrNotFound)
		}
		return nil
	})
}

// agentInOrg checks inside a write that the agent belongs to the organization.
func agentInOrg(ctx context.Context, tx *sql.Tx, orgID, agentID string) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM agents WHERE id = ? AND org_id = ?", agentID, orgID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("agent %q: %w", agentID, sqldb.ErrNotFound)
	}
	return err
}

// jobQuerier is what *sql.DB and *sql.Tx share for reads.
type jobQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryJobs(ctx context.Context, q jobQuerier, query string, args ...any) ([]Job, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: jobs: %w", err)
	}
	out, err := sqldb.Collect(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("storage: jobs: %w", err)
	}
	return out, nil
}

func scanJob(s sqldb.Scanner) (Job, error) {
	var j Job
	var created, updated int64
	if err := s.Scan(&j.ID, &j.OrgID, &j.AgentID, &j.Name, &j.Status, &j.TriggerType, &j.TrustLevel, &created, &updated); err != nil {
		return Job{}, err
	}
	j.CreatedAt, j.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return j, nil
}
