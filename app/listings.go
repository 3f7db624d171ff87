package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// maxListingsRead is the most listings GET /api/v1/listings/sync returns.
const maxListingsRead = 10000

// listingsState is what the listings handlers share: the vector side of
// listing search (nil when no embedder is configured; search is then
// keyword-only).
type listingsState struct {
	vectors *ListingVectors
}

// wireListings sets up listings search on the knowledge base's embedder.
func (a *App) wireListings(ctx context.Context) error {
	v := newListingVectors(a.srv)
	a.srv.listings.vectors = v
	if v != nil {
		// Load the listing spaces in the background so the first search
		// after a start does not pay for it.
		a.goWorker(func(ctx context.Context) error {
			if err := v.Index.Warm(ctx, "listings:"); err != nil && ctx.Err() == nil {
				a.log.Warn("loading listing vectors", "err", err)
			}
			return nil
		})
	}
	return nil
}

// syncBody is the POST sync body, kept raw so every problem is reported
// with its path.
type syncBody struct {
	Listings    json.RawMessage `json:"listings"`
	DeleteStale json.RawMessage `json:"deleteStale"`
}

// parseSyncBody validates the whole request: nothing is written unless
// every listing is valid.
func parseSyncBody(body syncBody) ([]ListingInput, bool, error) {
	var details []FieldError
	deleteStale := false
	if len(body.DeleteStale) > 0 && string(body.DeleteStale) != "null" {
		if err := json.Unmarshal(body.DeleteStale, &deleteStale); err != nil {
			details = append(details, FieldError{Path: "deleteStale", Message: "must be a boolean"})
		}
	}
	var items []json.RawMessage
	switch {
	case len(body.Listings) == 0 || string(body.Listings) == "null":
		details = append(details, FieldError{Path: "listings", Message: "is required"})
	case json.Unmarshal(body.Listings, &items) != nil:
		details = append(details, FieldError{Path: "listings", Message: "must be an array"})
	case len(items) == 0:
		details = append(details, FieldError{Path: "listings", Message: "must contain at least 1 listing"})
	case len(items) > MaxSyncListings:
		details = append(details, FieldError{Path: "listings",
			Message: fmt.Sprintf("must contain at most %d listings (got %d)", MaxSyncListings, len(items))})
		items = nil
	}
	out := make([]ListingInput, 0, len(items))
	for i, raw := range items {
		in, errs := ParseListing(raw)
		for _, e := range errs {
			p := "listings." + strconv.Itoa(i)
			if e.Path != "" {
				p += "." + e.Path
			}
			details = append(details, FieldError{Path: p, Message: e.Message})
		}
		out = append(out, in)
	}
	if len(details) > 0 {
		msg := "Validation failed: " + details[0].Path + " " + details[0].Message
		if len(details) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(details)-1)
		}
		return nil, false, &Error{Kind: errs.Invalid, Message: msg, Details: details}
	}
	return out, deleteStale, nil
}

func (s *Server) syncListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body syncBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	items, deleteStale, err := parseSyncBody(body)
	if err != nil {
		return err
	}
	rep, err := SyncListings(r.Context(), s.db, s.listings.vectors, ListingSync{
		OrgID: orgID(r), Items: items, DeleteStale: deleteStale, StaleCategory: items[0].Category,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"data": map[string]any{
			"imported": len(rep.Imported), "updated": len(rep.Updated), "unchanged": len(rep.Unchanged),
			"failed": len(rep.Failed), "deleted": rep.Deleted,
			"results": map[string]any{
				"imported": nonNilItems(rep.Imported), "updated": nonNilItems(rep.Updated),
				"unchanged": nonNilItems(rep.Unchanged), "failed": nonNilItems(rep.Failed),
			},
		},
		"meta": map[string]any{"timestamp": formatTime(s.now()), "message": rep.Message()},
	})
	return nil
}

// Message is the one-line summary of a sync.
func (r SyncReport) Message() string {
	return fmt.Sprintf("Synced %d listings: %d imported, %d updated, %d unchanged, %d failed, %d deleted",
		len(r.Imported)+len(r.Updated)+len(r.Unchanged)+len(r.Failed),
		len(r.Imported), len(r.Updated), len(r.Unchanged), len(r.Failed), r.Deleted)
}

func nonNilItems(s []SyncItem) []SyncItem {
	if s == nil {
		return []SyncItem{}
	}
	return s
}

func (s *Server) listListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var cat *string
	if c := r.URL.Query().Get("category"); c != "" {
		cat = &c
	}
	ls, total, err := s.db.ActiveListings(r.Context(), orgID(r), cat, maxListingsRead)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ls))
	for i, l := range ls {
		out[i] = map[string]any{
			"id": l.ID, "externalId": l.ExternalID, "title": l.Title, "price": priceOf(l),
			"status": "active", "sourceUrl": listingNullable(l.SourceURL), "updatedAt": formatTime(l.UpdatedAt),
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"data": map[string]any{"listings": out, "total": total},
		"meta": s.meta(),
	})
	return nil
}

// priceOf is the API form of a stored price: "12.50", or null without one.
func priceOf(l storage.Listing) any {
	if !l.HasPrice {
		return nil
	}
	return formatCents(l.PriceCents)
}

// listingNullable sends "" as null.
func listingNullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
