package dashstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Read-only aggregates for the dashboard's pages. Each answers from an
// index or the call_hours rollup (migrations/0012_dashboard.sql), so a page stays well under
// 100 ms with 100,000 calls and 10,000 sources in the organization.

// CallOverview is the state of an organization's calls at a glance.
type CallOverview struct {
	EndedByStatus map[string]int // final calls ended since the given time, by status
	Answered      int            // of those, calls someone answered
	Queued        int            // the dial queue: calls waiting for a free line
	Scheduled     int            // calls waiting for their time
	Active        int            // attempts being dialled or talked: connecting, ringing, active
}

// Ended is the number of calls that ended (any final status).
func (o CallOverview) Ended() int {
	n := 0
	for _, v := range o.EndedByStatus {
		n += v
	}
	return n
}

// CallOverview counts the organization's calls that ended since since (from
// the start of its hour), by final status, and the live ones (queued,
// scheduled, dialling).
func (db *Dashboard) CallOverview(ctx context.Context, orgID string, since time.Time) (CallOverview, error) {
	o := CallOverview{EndedByStatus: map[string]int{}}
	rows, err := db.c.ReadRows(ctx, `SELECT status, sum(calls), sum(answered) FROM call_hours
		WHERE org_id = ? AND hour >= ? GROUP BY status`, orgID, sqldb.MS(since)/3600000)
	if err != nil {
		return o, fmt.Errorf("storage: calls ended: %w", err)
	}
	if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var st string
		var n, answered int
		if err := sc.Scan(&st, &n, &answered); err != nil {
			return err
		}
		if n > 0 {
			o.EndedByStatus[st] = n
		}
		o.Answered += answered
		return nil
	}); err != nil {
		return o, err
	}
	live, err := db.c.ReadRows(ctx, `SELECT status, count(*) FROM calls WHERE org_id = ?
		AND status IN ('queued', 'scheduled', 'initiated', 'connecting', 'ringing', 'active') GROUP BY status`, orgID)
	if err != nil {
		return o, fmt.Errorf("storage: live calls: %w", err)
	}
	err = sqldb.Each(live, func(sc sqldb.Scanner) error {
		var st string
		var n int
		if err := sc.Scan(&st, &n); err != nil {
			return err
		}
		switch st {
		case callstore.CallQueued:
			o.Queued += n
		case callstore.CallScheduled, callstore.CallInitiated:
			o.Scheduled += n
		default:
			o.Active += n
		}
		return nil
	})
	return o, err
}

// HourCount is the number of calls of one final status that ended in one
// hour (Hour is the hour's start, UTC).
type HourCount struct {
	Hour   time.Time
	Status string
	N      int
}

// CallsPerHour counts the organization's calls that ended in the hours
// from from's to to's (both included) by final status, oldest hour first.
func (db *Dashboard) CallsPerHour(ctx context.Context, orgID string, from, to time.Time) ([]HourCount, error) {
	rows, err := db.c.ReadRows(ctx, `SELECT hour, status, calls FROM call_hours
		WHERE org_id = ? AND hour BETWEEN ? AND ? AND calls > 0 ORDER BY hour, status`,
		orgID, sqldb.MS(from)/3600000, sqldb.MS(to)/3600000)
	if err != nil {
		return nil, fmt.Errorf("storage: calls per hour: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (HourCount, error) {
		var h int64
		var c HourCount
		err := sc.Scan(&h, &c.Status, &c.N)
		c.Hour = sqldb.FromMS(h * 3600000)
		return c, err
	})
}

// OrgKBBacklog is the number of the organization's knowledge sources waiting
// for or in processing.
func (db *Dashboard) OrgKBBacklog(ctx context.Context, orgID string) (int, error) {
	var n int
	err := db.c.ReadRow(ctx, `SELECT count(*) FROM kb_sources WHERE org_id = ? AND status IN ('pending', 'processing')`,
		orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("storage: kb backlog: %w", err)
	}
	return n, nil
}

// BatchProgress is where one batch of calls stands.
type BatchProgress struct {
	BatchID   string
	AgentID   string
	AgentName string
	Total     int
	ByStatus  map[string]int
	CreatedAt time.Time // the first call's creation
}

// Done is the number of the batch's calls in a final status.
func (b BatchProgress) Done() int {
	n := 0
	for st, v := range b.ByStatus {
		if callstore.CallFinal(st) {
			n += v
		}
	}
	return n
}

// BatchProgresses is one page of the organization's batches, newest first
// (by their first call), with their calls counted by status, and the
// number of batches. One pass over the batch index counts every batch; only
// the page's agents are read.
func (db *Dashboard) BatchProgresses(ctx context.Context, orgID string, limit, offset int) ([]BatchProgress, int, error) {
	rows, err := db.c.ReadRows(ctx, `SELECT batch_id, status, count(*), min(created_at) FROM calls
		WHERE org_id = ? AND batch_id IS NOT NULL GROUP BY batch_id, status`, orgID)
	if err != nil {
		return nil, 0, fmt.Errorf("storage: batches: %w", err)
	}
	var all []BatchProgress
	if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var id, st string
		var n int
		var created int64
		if err := sc.Scan(&id, &st, &n, &created); err != nil {
			return err
		}
		if len(all) == 0 || all[len(all)-1].BatchID != id {
			all = append(all, BatchProgress{BatchID: id, ByStatus: map[string]int{}, CreatedAt: sqldb.FromMS(created)})
		}
		b := &all[len(all)-1]
		b.ByStatus[st] = n
		b.Total += n
		if t := sqldb.FromMS(created); t.Before(b.CreatedAt) {
			b.CreatedAt = t
		}
		return nil
	}); err != nil {
		return nil, 0, err
	}
	slices.SortFunc(all, func(a, b BatchProgress) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.BatchID, a.BatchID)
	})
	total := len(all)
	page := all[min(offset, total):min(offset+limit, total)]
	for i := range page {
		err := db.c.ReadRow(ctx, `SELECT c.agent_id, coalesce(a.name, '') FROM calls c LEFT JOIN agents a ON a.id = c.agent_id
			WHERE c.org_id = ? AND c.batch_id = ? LIMIT 1`, orgID, page[i].BatchID).Scan(&page[i].AgentID, &page[i].AgentName)
		if err != nil {
			return nil, 0, fmt.Errorf("storage: batch agent: %w", err)
		}
	}
	return page, total, nil
}

// CategoryCount is one listing category and how many listings it holds
// ("" is the listings without a category).
type CategoryCount struct {
	Category string
	N        int
}

// ListingCategories lists the organization's listing categories with their
// sizes, by name.
func (db *Dashboard) ListingCategories(ctx context.Context, orgID string) ([]CategoryCount, error) {
	rows, err := db.c.ReadRows(ctx, `SELECT category, count(*) FROM listings WHERE org_id = ?
		GROUP BY category ORDER BY category LIMIT 500`, orgID)
	if err != nil {
		return nil, fmt.Errorf("storage: listing categories: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (c CategoryCount, err error) {
		err = sc.Scan(&c.Category, &c.N)
		return c, err
	})
}
