package events

import (
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/storage"
)

// Views are the GET shapes of the resources events carry. The call, source
// and listing views belong to their features; the package app passes them
// in (Install), so an event's data is exactly what the resource's GET
// shows, built from the state the event's transaction left.
type Views struct {
	Call    func(storage.CallSnapshot) any // as GET /api/v1/calls/{id}
	Source  func(storage.Source) any       // as an item of GET /api/v1/kb/sources
	Listing func(storage.Listing) any      // as an item of GET /api/v1/listings/sync
}

// FeatureViews are the views of the features that own the resources, the
// ones every process (server and CLI) installs.
func FeatureViews() Views {
	return Views{Call: calls.EventView, Source: kb.SourceEventView, Listing: listings.EventView}
}

// Install makes db render every event it writes with v, plus this
// package's own views of a listings sync and a finished batch. Every
// process that writes (the server, the CLI) installs the same views.
func Install(db *storage.DB, v Views) {
	db.SetEventViews(storage.EventViews{
		Call:   v.Call,
		Source: v.Source,
		Listings: func(s storage.ListingsSynced) any {
			return listingsSyncView(s, v.Listing)
		},
		Batch: func(s storage.BatchSummary) any { return batchView(s) },
	})
}

// ListingsSync is the data of listings.sync.completed: the counts of what
// the sync wrote and every written listing as the listings GET shows it.
// Listings the sync left unchanged are not written and not listed.
type ListingsSync struct {
	Imported int     `json:"imported"`
	Updated  int     `json:"updated"`
	Failed   int     `json:"failed"`
	Deleted  int     `json:"deleted"`
	Category *string `json:"staleCategory,omitempty"` // the category deleteStale pruned
	Listings []any   `json:"listings"`
}

func listingsSyncView(s storage.ListingsSynced, item func(storage.Listing) any) ListingsSync {
	out := ListingsSync{Imported: len(s.Created), Updated: len(s.Updated), Failed: s.Failed, Deleted: s.Deleted,
		Category: s.Category, Listings: make([]any, 0, len(s.Created)+len(s.Updated))}
	for _, group := range [][]storage.Listing{s.Created, s.Updated} {
		for _, l := range group {
			if item != nil {
				out.Listings = append(out.Listings, item(l))
			} else {
				out.Listings = append(out.Listings, map[string]string{"id": l.ID, "externalId": l.ExternalID})
			}
		}
	}
	return out
}

// Batch is the data of batch.completed: a batch has no GET of its own, so
// this is its summary, with the count of calls by final status.
type Batch struct {
	BatchID   string         `json:"batchId"`
	Name      string         `json:"name"`
	AgentID   string         `json:"agentId"`
	Total     int            `json:"total"`
	Statuses  map[string]int `json:"statuses"`
	CreatedAt string         `json:"createdAt"`
	EndedAt   string         `json:"endedAt"`
}

func batchView(s storage.BatchSummary) Batch {
	st := map[string]int{}
	for _, k := range []string{storage.CallCompleted, storage.CallFailed, storage.CallBusy, storage.CallNoAnswer, storage.CallCancelled} {
		st[k] = s.ByStatus[k]
	}
	end := s.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	return Batch{BatchID: s.BatchID, Name: s.Name, AgentID: s.AgentID, Total: s.Total, Statuses: st,
		CreatedAt: formatTime(s.CreatedAt), EndedAt: formatTime(end)}
}
