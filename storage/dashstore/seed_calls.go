package dashstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// SeedCall is a bare call row for tests and benchmarks of the agent views.
type SeedCall struct {
	ID        string // set by SeedCalls when empty
	OrgID     string
	AgentID   string
	Status    string
	Phone     string // default +15550000000
	Attempts  int    // dial attempts made (a result needs one)
	CreatedAt time.Time
}

// SeedCalls inserts bare call rows in one transaction. It is test and
// benchmark support only (the workforce view needs calls in final states
// without a dialer); real calls are created by the calls feature. It
// returns the ids, in order.
func (db *Dashboard) SeedCalls(ctx context.Context, calls []SeedCall) ([]string, error) {
	ids := make([]string, len(calls))
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO calls (id, org_id, agent_id, status, phone_number, due_at, created_at, updated_at, attempts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, c := range calls {
			if c.ID == "" {
				c.ID = uuid.NewString()
			}
			if c.Phone == "" {
				c.Phone = "+15550000000"
			}
			if c.CreatedAt.IsZero() {
				c.CreatedAt = time.Now()
			}
			if _, err := st.ExecContext(ctx, c.ID, c.OrgID, c.AgentID, c.Status, c.Phone, sqldb.MS(c.CreatedAt), sqldb.MS(c.CreatedAt), sqldb.MS(c.CreatedAt), c.Attempts); err != nil {
				return fmt.Errorf("storage: seed call %d: %w", i, err)
			}
			ids[i] = c.ID
		}
		return nil
	})
	return ids, err
}

// SetCallStatusForTest moves a call to a status directly, as the dial
// worker would. Test support only: the calls feature owns real transitions.
func (db *Dashboard) SetCallStatusForTest(ctx context.Context, callID, status string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE calls SET status = ?, updated_at = ? WHERE id = ?", status, sqldb.MS(time.Now()), callID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("call %q: %w", callID, sqldb.ErrNotFound)
		}
		return nil
	})
}

// DeleteCallForTest removes a call row. Test support only.
func (db *Dashboard) DeleteCallForTest(ctx context.Context, callID string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM calls WHERE id = ?", callID)
		return err
	})
}
