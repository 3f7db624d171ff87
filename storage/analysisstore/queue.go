package analysisstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Job is a pending analysis claimed by a worker, with its agent's plan.
type Job struct {
	Kind      string
	SubjectID string
	OrgID     string
	AgentID   string
	Attempts  int
	Plan      json.RawMessage // nil when the plan was removed since
}

// Claim takes up to max pending analyses that are due and not held by a
// live lease, for owner until now+lease, and counts the attempt (Job.
// Attempts includes it): a row whose worker died mid-analysis still
// counts, so a caller can stop claiming it. The lease lives in the database,
// so workers of several processes never take the same row, and a row a
// killed process held is taken again once its lease runs out.
func (s *Store) Claim(ctx context.Context, owner string, lease time.Duration, max int) ([]Job, error) {
	now := time.Now()
	// A read first: an idle worker's claim finds nothing, and a write
	// transaction per poll of every process is what idle must not cost.
	var due bool
	if err := s.c.ReadRowFresh(ctx, `SELECT EXISTS (SELECT 1 FROM analyses WHERE status = 'pending' AND due_at <= ?
		AND (lease_until IS NULL OR lease_until < ?))`, sqldb.MS(now), sqldb.MS(now)).Scan(&due); err != nil {
		return nil, fmt.Errorf("storage: claim analyses: %w", err)
	}
	if !due {
		return nil, nil
	}
	var jobs []Job
	err := s.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		jobs = jobs[:0]
		// The lease condition is repeated in the UPDATE: on PostgreSQL
		// (READ COMMITTED, sqldb.WriteClaim) two claims may read the same
		// rows, and only one updates them.
		rows, err := tx.QueryContext(ctx, `UPDATE analyses SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
			WHERE status = 'pending' AND due_at <= ? AND (lease_until IS NULL OR lease_until < ?)
			AND (subject_kind, subject_id) IN (SELECT subject_kind, subject_id FROM analyses
				WHERE status = 'pending' AND due_at <= ? AND (lease_until IS NULL OR lease_until < ?)
				ORDER BY due_at LIMIT ?)
			RETURNING subject_kind, subject_id, org_id, agent_id, attempts`,
			owner, sqldb.MS(now.Add(lease)), sqldb.MS(now), sqldb.MS(now), sqldb.MS(now), sqldb.MS(now), max)
		if err != nil {
			return err
		}
		jobs, err = sqldb.Collect(rows, func(sc sqldb.Scanner) (j Job, err error) {
			err = sc.Scan(&j.Kind, &j.SubjectID, &j.OrgID, &j.AgentID, &j.Attempts)
			return j, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("storage: claim analyses: %w", err)
	}
	for i := range jobs {
		var plan sql.NullString
		err := s.r.QueryRowContext(ctx, "SELECT plan FROM agent_analysis_plans WHERE agent_id = ?", jobs[i].AgentID).Scan(&plan)
		if err != nil && err != sql.ErrNoRows {
			return nil, fmt.Errorf("storage: analysis plan: %w", err)
		}
		if plan.Valid {
			jobs[i].Plan = json.RawMessage(plan.String)
		}
	}
	return jobs, nil
}

// Finish stores a final result (completed, failed or skipped) and its
// event in one transaction, only while owner still holds the row pending:
// done is false when the lease was lost (another worker finishes it) or
// the row was queued again meanwhile, so no result is written twice.
func (s *Store) Finish(ctx context.Context, j Job, owner, status string, result json.RawMessage, ev sqldb.PendingEvent) (done bool, err error) {
	now := sqldb.MS(time.Now())
	err = s.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE analyses SET status = ?, result = ?, analyzed_at = ?,
			lease_owner = NULL, lease_until = NULL
			WHERE subject_kind = ? AND subject_id = ? AND status = 'pending' AND lease_owner = ?`,
			status, string(result), now, j.Kind, j.SubjectID, owner)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		done = true
		_, err = s.c.InsertEvents(ctx, tx, []sqldb.PendingEvent{ev})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("storage: finish analysis: %w", err)
	}
	return done, nil
}

// Retry leaves the row pending, due again at due, and releases owner's
// lease (the model was down: the analysis waits for it).
func (s *Store) Retry(ctx context.Context, j Job, owner string, due time.Time) error {
	return s.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE analyses SET due_at = ?, lease_owner = NULL, lease_until = NULL
			WHERE subject_kind = ? AND subject_id = ? AND status = 'pending' AND lease_owner = ?`,
			sqldb.MS(due), j.Kind, j.SubjectID, owner)
		return err
	})
}

// NextDue is when the earliest pending analysis can be claimed: its due
// time, or the end of the lease another worker holds on it (zero when none
// is pending), so an idle worker knows when to look again, and does not
// spin on rows another process is analysing.
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	var next sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT min(CASE WHEN lease_until > due_at THEN lease_until ELSE due_at END)
		FROM analyses WHERE status = 'pending'`).Scan(&next); err != nil {
		return time.Time{}, err
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	return sqldb.FromMS(next.Int64), nil
}

// Renew extends owner's leases on the jobs it still holds, so a slow model
// call never loses its row to another worker.
func (s *Store) Renew(ctx context.Context, jobs []Job, owner string, lease time.Duration) error {
	if len(jobs) == 0 {
		return nil
	}
	return s.c.Write(ctx, func(tx *sql.Tx) error {
		for _, j := range jobs {
			if _, err := tx.ExecContext(ctx, `UPDATE analyses SET lease_until = ?
				WHERE subject_kind = ? AND subject_id = ? AND lease_owner = ? AND status = 'pending'`,
				sqldb.MS(time.Now().Add(lease)), j.Kind, j.SubjectID, owner); err != nil {
				return err
			}
		}
		return nil
	})
}
