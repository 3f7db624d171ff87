package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/internal/jsonbody"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/listingstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// The data of an event is what its transaction recorded: a storage-owned
// snapshot of the call, source, listings sync or batch (sqldb.Event.Version
// says its format). Render turns it into the public body where the event
// leaves the process (the list, the stream, a webhook delivery), with the
// views of the features that own the resources, so an event's data is
// exactly what the resource's GET shows, built from the state the event's
// transaction left. Nothing is installed into storage at run time.

// Render is the public data of e: its recorded snapshot through the owning
// feature's view, or, for version 0 (pings, events logged before
// snapshots), the body as stored.
func Render(e sqldb.Event) json.RawMessage {
	if e.Version == 0 {
		return e.Data
	}
	v, err := renderView(e)
	if err != nil { // a snapshot this build cannot read: say which resource
		_, id, _ := strings.Cut(e.Subject, ":")
		v = map[string]string{"id": id}
	}
	b, err := jsonbody.Encode(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// renderView decodes e's snapshot and applies the view of its type.
func renderView(e sqldb.Event) (any, error) {
	switch {
	case e.Type == callstore.EventBatchCompleted:
		s, err := callstore.DecodeBatchSummary(e.Data, e.Version)
		return batchView(s), err
	case strings.HasPrefix(e.Type, "call."):
		s, err := callstore.DecodeCallSnapshot(e.Data, e.Version)
		return calls.EventView(s), err
	case strings.HasPrefix(e.Type, "kb.source."):
		s, err := kbstore.DecodeSource(e.Data, e.Version)
		return kb.SourceEventView(s), err
	case strings.HasPrefix(e.Type, "conversation."):
		s, err := convstore.DecodeSnapshot(e.Data, e.Version)
		return conversations.EventView(s), err
	case e.Type == listingstore.EventListingsSynced:
		s, err := listingstore.DecodeListingsSynced(e.Data, e.Version)
		return listingsSyncView(s, listings.EventView), err
	}
	return nil, fmt.Errorf("events: no view of %s data version %d", e.Type, e.Version)
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

func listingsSyncView(s listingstore.ListingsSynced, item func(listingstore.Listing) any) ListingsSync {
	out := ListingsSync{Imported: len(s.Created), Updated: len(s.Updated), Failed: s.Failed, Deleted: s.Deleted,
		Category: s.Category, Listings: make([]any, 0, len(s.Created)+len(s.Updated))}
	for _, group := range [][]listingstore.SyncedListing{s.Created, s.Updated} {
		for _, l := range group {
			out.Listings = append(out.Listings, item(l.Listing()))
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

func batchView(s callstore.BatchSummary) Batch {
	st := map[string]int{}
	for _, k := range []string{callstore.CallCompleted, callstore.CallFailed, callstore.CallBusy, callstore.CallNoAnswer, callstore.CallCancelled} {
		st[k] = s.ByStatus[k]
	}
	end := s.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	return Batch{BatchID: s.BatchID, Name: s.Name, AgentID: s.AgentID, Total: s.Total, Statuses: st,
		CreatedAt: formatTime(s.CreatedAt), EndedAt: formatTime(end)}
}
