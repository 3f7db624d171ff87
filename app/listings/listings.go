// Package listings owns the rules of an organization's product listings:
// validation (with field paths), sync by externalId, the list for diffing,
// search, and file import. The HTTP handlers of package app and the
// agentd import command both call it; it knows nothing of HTTP.
package listings

import (
	"context"
	"fmt"

	"github.com/agentd/agentd/storage/listingstore"
)

// MaxSync is the most listings one sync may carry.
const MaxSync = 1000

// MaxList is the most listings List returns (GET /api/v1/listings/sync).
const MaxList = 10000

// Service is the listings feature over one database, so callers hand over
// the database and the vector side once instead of on every call.
type Service struct {
	DB      Deps
	Vectors *Vectors // nil: no embedder, search is keyword-only
}

// Deps are the stores the listings feature uses.
type Deps struct {
	Listings *listingstore.Listings // it writes the listing vectors too
}

// New returns the listings feature over its stores; v is its vector side
// (nil: no embedder, search is keyword-only).
func New(d Deps, v *Vectors) *Service { return &Service{DB: d, Vectors: v} }

// SyncItem is one listing in a sync report.
type SyncItem struct {
	ID         string `json:"id"`
	ExternalID string `json:"externalId"`
	Title      string `json:"title"`
	Error      string `json:"error,omitempty"`
}

// SyncReport is what a sync did, item by item.
type SyncReport struct {
	Imported  []SyncItem
	Updated   []SyncItem
	Unchanged []SyncItem
	Failed    []SyncItem
	Deleted   int
}

// Message is the one-line summary of a sync.
func (r SyncReport) Message() string {
	return fmt.Sprintf("Synced %d listings: %d imported, %d updated, %d unchanged, %d failed, %d deleted",
		len(r.Imported)+len(r.Updated)+len(r.Unchanged)+len(r.Failed),
		len(r.Imported), len(r.Updated), len(r.Unchanged), len(r.Failed), r.Deleted)
}

// Add merges another report into r (an import spreads over several syncs).
func (r *SyncReport) Add(o SyncReport) {
	r.Imported = append(r.Imported, o.Imported...)
	r.Updated = append(r.Updated, o.Updated...)
	r.Unchanged = append(r.Unchanged, o.Unchanged...)
	r.Failed = append(r.Failed, o.Failed...)
	r.Deleted += o.Deleted
}

// List is the active listings of the organization (at most MaxList) and
// how many there are in all, for a client diffing its catalogue. An empty
// category means every category.
func (s *Service) List(ctx context.Context, orgID, category string) ([]listingstore.Listing, int, error) {
	var cat *string
	if category != "" {
		cat = &category
	}
	return s.DB.Listings.ActiveListings(ctx, orgID, cat, MaxList)
}

// Listing is a stored listing, named here so callers above the features
// (the dashboard) need no storage package.
type Listing = listingstore.Listing
