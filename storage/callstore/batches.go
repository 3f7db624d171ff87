package callstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// Batch statuses. Running, paused and cancelled are stored; completed is
// derived: a running or paused batch none of whose calls waits or is live.
const (
	BatchRunning   = "running"
	BatchPaused    = "paused"
	BatchCompleted = "completed"
	BatchCancelled = "cancelled"
)

// waitingSQL lists the statuses of a call that has not been dialled yet (or
// waits for its next attempt).
const waitingSQL = "('initiated', 'scheduled', 'queued')"

// openSQL lists the statuses of a call that is not final.
const openSQL = "('initiated', 'scheduled', 'queued', 'connecting', 'ringing', 'active')"

// Batch is a batch of calls run as a campaign, with the figures of its calls.
type Batch struct {
	ID        string
	OrgID     string
	AgentID   string
	AgentName string
	Name      string
	Status    string // running, paused, completed or cancelled (derived on read)
	CreatedAt time.Time
	UpdatedAt time.Time

	// Figures of the batch's calls, filled by reads.
	Counts    map[string]int // calls by status
	Total     int
	Attempts  int        // attempts dialled, all calls together
	Dialled   int        // calls dialled at least once
	Answered  int        // calls that ended completed by a person (voicemail left out)
	NextDueAt *time.Time // earliest due time of a waiting call
}

// CreateBatch stores a batch and its calls in one transaction; the calls
// get the batch's id. The created calls are returned in order.
func (db *Calls) CreateBatch(ctx context.Context, b Batch, calls []Call) (Batch, []Call, error) {
	if b.ID == "" {
		b.ID = uuid.NewString()
	}
	now := time.Now().UTC()
	b.Status, b.CreatedAt, b.UpdatedAt = BatchRunning, now, now
	for i := range calls {
		calls[i].BatchID = b.ID
	}
	created, err := db.createCalls(ctx, calls, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO call_batches (id, org_id, agent_id, name, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, b.ID, b.OrgID, b.AgentID, b.Name, b.Status, sqldb.MS(now), sqldb.MS(now))
		if err != nil {
			return fmt.Errorf("storage: insert batch: %w", err)
		}
		return nil
	})
	return b, created, err
}

// batchStatusSQL derives a batch's status from its stored one and its calls.
const batchStatusSQL = `CASE WHEN b.status = 'cancelled' THEN 'cancelled'
	WHEN EXISTS (SELECT 1 FROM calls c WHERE c.batch_id = b.id AND c.status IN ` + openSQL + `) THEN b.status
	ELSE 'completed' END`

const batchSelect = `SELECT b.id, b.org_id, b.agent_id, coalesce(a.name, ''), b.name, ` + batchStatusSQL + ` AS st,
	b.created_at, b.updated_at FROM call_batches b LEFT JOIN agents a ON a.id = b.agent_id`

// BatchFilter selects batches for ListBatches; empty fields do not filter.
type BatchFilter struct {
	OrgID   string
	AgentID string
	Status  string // running, paused, completed or cancelled
	Limit   int
	Offset  int
}

// ListBatches returns one page of the organization's batches, newest
// first, with their figures, and how many match the filter.
func (db *Calls) ListBatches(ctx context.Context, f BatchFilter) ([]Batch, int, error) {
	where := []string{"b.org_id = ?"}
	args := []any{f.OrgID}
	if f.AgentID != "" {
		where, args = append(where, "b.agent_id = ?"), append(args, f.AgentID)
	}
	q := batchSelect + " WHERE " + strings.Join(where, " AND ")
	if f.Status != "" {
		q = "SELECT * FROM (" + q + ") b WHERE st = ?"
		args = append(args, f.Status)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM ("+q+") b", args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("storage: count batches: %w", err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := db.r.QueryContext(ctx, "SELECT * FROM ("+q+") b ORDER BY 7 DESC, 1 DESC LIMIT ? OFFSET ?",
		append(args, limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("storage: list batches: %w", err)
	}
	out, err := sqldb.Collect(rows, scanBatch)
	if err != nil {
		return nil, 0, err
	}
	for i := range out {
		if err := db.batchFigures(ctx, &out[i]); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// GetBatch reads one batch of the organization with its figures; another
// organization's batch is sqldb.ErrNotFound, like a missing one.
func (db *Calls) GetBatch(ctx context.Context, orgID, id string) (Batch, error) {
	b, err := scanBatch(db.r.QueryRowContext(ctx, batchSelect+" WHERE b.id = ? AND b.org_id = ?", id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return Batch{}, fmt.Errorf("batch %q: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return Batch{}, err
	}
	return b, db.batchFigures(ctx, &b)
}

func scanBatch(s sqldb.Scanner) (Batch, error) {
	var b Batch
	var created, updated int64
	err := s.Scan(&b.ID, &b.OrgID, &b.AgentID, &b.AgentName, &b.Name, &b.Status, &created, &updated)
	b.CreatedAt, b.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return b, err
}

// batchFigures counts a batch's calls by status, its attempts, dialled and
// answered calls and its next due time (calls_batch index).
func (db *Calls) batchFigures(ctx context.Context, b *Batch) error {
	rows, err := db.r.QueryContext(ctx, `SELECT status, count(*), sum(attempts), sum(CASE WHEN attempts > 0 THEN 1 ELSE 0 END),
		sum(CASE WHEN status = 'completed' AND coalesce(last_outcome, '') != 'voicemail' THEN 1 ELSE 0 END),
		min(CASE WHEN status IN `+waitingSQL+` THEN due_at END)
		FROM calls WHERE batch_id = ? GROUP BY status`, b.ID)
	if err != nil {
		return fmt.Errorf("storage: batch figures: %w", err)
	}
	b.Counts = map[string]int{}
	b.Total, b.Attempts, b.Dialled, b.Answered, b.NextDueAt = 0, 0, 0, 0, nil
	return sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var st string
		var n, att, dialled, answered int
		var due sql.NullInt64
		if err := sc.Scan(&st, &n, &att, &dialled, &answered, &due); err != nil {
			return err
		}
		b.Counts[st] = n
		b.Total += n
		b.Attempts += att
		b.Dialled += dialled
		b.Answered += answered
		if t := sqldb.OptMS(due); t != nil && (b.NextDueAt == nil || t.Before(*b.NextDueAt)) {
			b.NextDueAt = t
		}
		return nil
	})
}

// ErrBatchState is returned (wrapping sqldb.ErrConflict) when a batch cannot go
// to the status asked for from the one it has.
var ErrBatchState = fmt.Errorf("batch status does not allow it: %w", sqldb.ErrConflict)

// PauseBatch stops new dials of a running batch: it becomes paused and its
// waiting calls go (back) to scheduled, where the scheduler leaves them
// while the batch is paused. Calls being dialled finish. A batch already
// paused stays so; a cancelled one is ErrBatchState.
func (db *Calls) PauseBatch(ctx context.Context, orgID, id string, now time.Time) error {
	return db.setBatchStatus(ctx, orgID, id, BatchPaused, now, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE calls SET status = 'scheduled', updated_at = ?
			WHERE batch_id = ? AND status IN ('initiated', 'queued')`, sqldb.MS(now), id)
		return err
	})
}

// ResumeBatch lets a paused batch run again: its scheduled calls fall due
// at their times (wake the scheduler). A running batch stays so; a
// cancelled one is ErrBatchState.
func (db *Calls) ResumeBatch(ctx context.Context, orgID, id string, now time.Time) error {
	return db.setBatchStatus(ctx, orgID, id, BatchRunning, now, nil)
}

func (db *Calls) setBatchStatus(ctx context.Context, orgID, id, status string, now time.Time, also func(*sql.Tx) error) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		var prev string
		err := tx.QueryRowContext(ctx, "SELECT status FROM call_batches WHERE id = ? AND org_id = ?", id, orgID).Scan(&prev)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("batch %q: %w", id, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if prev == BatchCancelled {
			return fmt.Errorf("batch %q is cancelled: %w", id, ErrBatchState)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE call_batches SET status = ?, updated_at = ? WHERE id = ?",
			status, sqldb.MS(now), id); err != nil {
			return err
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
}

// CancelBatch cancels a batch: every call of it not yet final is cancelled
// in one transaction, so no claim can take one afterwards. It returns how
// many calls it cancelled and the ids of those being dialled, for the dial
// queue to hang up (another process's queue does so within a heartbeat).
// Cancelling a cancelled batch again changes nothing.
func (db *Calls) CancelBatch(ctx context.Context, orgID, id string, now time.Time) (int, []string, error) {
	var n int64
	var live []string
	// READ COMMITTED on PostgreSQL (sqldb.WriteClaim): the batch's open
	// calls are locked first (FOR UPDATE waits for a claim or a progress
	// write in flight and reads the row it left), so none changes before
	// the cancel; under SERIALIZABLE the dial queue's writes to the same
	// calls failed the cancel until it gave up.
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		live = live[:0] // fn runs again after a deadlock
		var prev string
		err := tx.QueryRowContext(ctx, "SELECT status FROM call_batches WHERE id = ? AND org_id = ?", id, orgID).Scan(&prev)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("batch %q: %w", id, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE call_batches SET status = 'cancelled', updated_at = ? WHERE id = ?",
			sqldb.MS(now), id); err != nil {
			return err
		}
		// PostgreSQL locks every open call of the batch (claims run
		// concurrently there) and tells the live ones by their status.
		q := sqldb.PerDialect[string]{
			SQLite:   "SELECT id, 1 FROM calls WHERE batch_id = ? AND status IN " + liveSQL,
			Postgres: "SELECT id, status IN " + liveSQL + " FROM calls WHERE batch_id = ? AND status IN " + openSQL + " FOR UPDATE",
		}.For(db.c.Dialect())
		rows, err := tx.QueryContext(ctx, q, id)
		if err != nil {
			return err
		}
		if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
			var cid string
			var isLive bool
			err := sc.Scan(&cid, &isLive)
			if isLive {
				live = append(live, cid)
			}
			return err
		}); err != nil {
			return err
		}
		// claim_token and lease stay on live calls: their worker still
		// owns the attempt until it has hung up (as CancelCall).
		ids, err := queryIDs(ctx, tx, `UPDATE calls SET status = 'cancelled', ended_at = ?, updated_at = ?
			WHERE batch_id = ? AND status IN `+openSQL+` RETURNING id`, sqldb.MS(now), sqldb.MS(now), id)
		if err != nil {
			return err
		}
		n = int64(len(ids))
		return db.emitCalls(ctx, tx, EventCallEnded, ids)
	})
	if err != nil {
		return 0, nil, fmt.Errorf("storage: cancel batch: %w", err)
	}
	return int(n), live, nil
}

// BatchPaused reports whether the batch is paused now: the dial queue asks
// before dialling a call it claimed ahead of its slot.
func (db *Calls) BatchPaused(ctx context.Context, id string) (bool, error) {
	var st string
	err := db.r.QueryRowContext(ctx, "SELECT status FROM call_batches WHERE id = ?", id).Scan(&st)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("storage: batch status: %w", err)
	}
	return st == BatchPaused, nil
}
