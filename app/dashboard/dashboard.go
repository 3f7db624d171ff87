// Package dashboard is the dashboard's read model: the aggregates its pages
// show (the day's calls, the week's chart, campaigns' progress, the
// knowledge backlog, listing categories), read from storage/dashstore. The
// dashboard (app/web) takes this service, never the store, so what a page
// may read is this package's methods.
package dashboard

import (
	"context"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// The aggregates' records, named here so the pages need no storage package.
type (
	// CallOverview is an organization's calls at a glance.
	CallOverview = dashstore.CallOverview
	// HourCount is the calls that ended in one hour, by status.
	HourCount = dashstore.HourCount
	// BatchProgress is one campaign's calls by status.
	BatchProgress = dashstore.BatchProgress
	// CategoryCount is one listing category and how many listings it has.
	CategoryCount = dashstore.CategoryCount
	// AttemptBuckets is a campaign's dial attempts over time, by outcome.
	AttemptBuckets = dashstore.AttemptBuckets
)

// Deps are the stores the dashboard reads.
type Deps struct {
	Dashboard *dashstore.Dashboard
}

// Service answers the dashboard's aggregate reads, scoped to one
// organization each.
type Service struct{ db *dashstore.Dashboard }

// New returns the dashboard's read model over its store.
func New(d Deps) *Service { return &Service{db: d.Dashboard} }

// Overview is the overview page's figures: today's calls, the knowledge
// backlog and the calls per hour since First (the week's chart).
type Overview struct {
	Calls CallOverview
	// Dialled is the calls ended today that were dialled: all but the
	// cancelled ones (a call cancelled in the queue never rang).
	Dialled   int
	KBBacklog int
	Hours     []HourCount // from First to the current hour
}

// Overview reads the calls ended since midnight, the live ones, the
// knowledge backlog and the calls per hour from first to now's hour.
func (s *Service) Overview(ctx context.Context, orgID string, midnight, first, now time.Time) (Overview, error) {
	if first.After(midnight) || midnight.After(now) {
		return Overview{}, errs.Invalidf("overview: want first <= midnight <= now")
	}
	var o Overview
	var err error
	if o.Calls, err = s.db.CallOverview(ctx, orgID, midnight); err != nil {
		return Overview{}, err
	}
	o.Dialled = o.Calls.Ended() - o.Calls.EndedByStatus[callstore.CallCancelled]
	if o.KBBacklog, err = s.db.OrgKBBacklog(ctx, orgID); err != nil {
		return Overview{}, err
	}
	if o.Hours, err = s.db.CallsPerHour(ctx, orgID, first, now.Truncate(time.Hour)); err != nil {
		return Overview{}, err
	}
	return o, nil
}

// KBBacklog is the organization's sources waiting to be embedded.
func (s *Service) KBBacklog(ctx context.Context, orgID string) (int, error) {
	return s.db.OrgKBBacklog(ctx, orgID)
}

// Batches is one page of the organization's campaigns with their calls by
// status, newest first, and how many campaigns there are.
func (s *Service) Batches(ctx context.Context, orgID string, limit, offset int) ([]BatchProgress, int, error) {
	if limit < 1 || offset < 0 {
		return nil, 0, errs.Invalidf("batches: limit must be >= 1 and offset >= 0")
	}
	return s.db.BatchProgresses(ctx, orgID, limit, offset)
}

// BatchAttempts is a campaign's dial attempts over time, by outcome.
func (s *Service) BatchAttempts(ctx context.Context, orgID, batchID string) (AttemptBuckets, error) {
	return s.db.BatchAttempts(ctx, orgID, batchID)
}

// ListingCategories is the organization's listing categories with counts.
func (s *Service) ListingCategories(ctx context.Context, orgID string) ([]CategoryCount, error) {
	return s.db.ListingCategories(ctx, orgID)
}
