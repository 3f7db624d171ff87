package dashstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// HistoryCall is a call row with its outcome, for SeedHistory.
type HistoryCall struct {
	OrgID      string
	AgentID    string
	Status     string
	Direction  string // default outbound
	Phone      string // default +15550000000
	BatchID    string
	CreatedAt  time.Time
	AnsweredAt *time.Time
	EndedAt    *time.Time
}

// SeedHistory inserts call rows with their outcome times in one
// transaction: a week of history for the dashboard's tests and benchmarks
// without a dialer. Test and benchmark support only; real calls are made
// by the calls feature.
func (db *Dashboard) SeedHistory(ctx context.Context, calls []HistoryCall) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO calls (id, org_id, agent_id, direction, status, phone_number,
			batch_id, due_at, started_at, answered_at, ended_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, c := range calls {
			if c.Direction == "" {
				c.Direction = "outbound"
			}
			if c.Phone == "" {
				c.Phone = "+15550000000"
			}
			var batch, started any
			if c.BatchID != "" {
				batch = c.BatchID
			}
			if c.EndedAt != nil {
				started = sqldb.MS(c.CreatedAt)
			}
			updated := c.CreatedAt
			if c.EndedAt != nil {
				updated = *c.EndedAt
			}
			if _, err := st.ExecContext(ctx, uuid.NewString(), c.OrgID, c.AgentID, c.Direction, c.Status, c.Phone, batch,
				sqldb.MS(c.CreatedAt), started, sqldb.NullMS(c.AnsweredAt), sqldb.NullMS(c.EndedAt), sqldb.MS(c.CreatedAt), sqldb.MS(updated)); err != nil {
				return fmt.Errorf("storage: seed call %d: %w", i, err)
			}
		}
		return nil
	})
}

// WeekOfCalls makes n calls of one agent spread over the week before now,
// deterministic, with a working day's shape (busy from 8 to 20, quiet at
// night and at the weekend): mostly ended (completed, no answer, busy,
// failed, cancelled), a few queued, scheduled or being dialled, and two
// calls in five in batches of 500. It feeds SeedHistory in tests,
// benchmarks and the dashboard's screenshots.
func WeekOfCalls(orgID, agentID string, n int, now time.Time) []HistoryCall {
	const hours = 7 * 24
	start := now.Truncate(time.Hour).Add(-(hours - 1) * time.Hour)
	cum := make([]float64, hours)
	total := 0.0
	for h := range cum {
		t := start.Add(time.Duration(h) * time.Hour)
		w := 0.12
		if hr := t.Hour(); hr >= 8 && hr < 20 {
			w = 1 + 0.7*math.Sin(float64(hr-8)/12*math.Pi)
		}
		if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
			w *= 0.35
		}
		total += w
		cum[h] = total
	}
	out := make([]HistoryCall, n)
	h := 0
	for i := range out {
		pos := (float64(i) + 0.5) / float64(n) * total
		for h < hours-1 && cum[h] <= pos {
			h++
		}
		lo := 0.0
		if h > 0 {
			lo = cum[h-1]
		}
		frac := (pos - lo) / (cum[h] - lo)
		created := start.Add(time.Duration(h)*time.Hour + time.Duration(frac*float64(time.Hour)))
		if created.After(now) {
			created = now.Add(-time.Duration(n-i) * time.Millisecond)
		}
		c := HistoryCall{OrgID: orgID, AgentID: agentID, CreatedAt: created, Phone: fmt.Sprintf("+1555%07d", i%10_000_000)}
		if i%5 < 2 {
			c.BatchID = fmt.Sprintf("batch-%04d", i/500)
		}
		if i%10 == 9 {
			c.Direction = "inbound"
		}
		end := created.Add(time.Duration(30+i%300) * time.Second)
		switch k := i * 37 % 100; {
		case k < 55:
			c.Status, c.AnsweredAt, c.EndedAt = callstore.CallCompleted, &created, &end
		case k < 70:
			c.Status, c.EndedAt = callstore.CallNoAnswer, &end
		case k < 78:
			c.Status, c.EndedAt = callstore.CallBusy, &end
		case k < 85:
			c.Status, c.EndedAt = callstore.CallFailed, &end
		case k < 90:
			c.Status, c.EndedAt = callstore.CallCancelled, &end
		case k < 95:
			c.Status = callstore.CallQueued
		case k < 98:
			c.Status = callstore.CallScheduled
		default:
			c.Status = callstore.CallActive
			c.AnsweredAt = &created
		}
		if c.EndedAt != nil && c.EndedAt.After(now) {
			c.EndedAt = &now
		}
		out[i] = c
	}
	return out
}
