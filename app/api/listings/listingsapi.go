// Package listings is the HTTP face of listings (app/listings): sync, the
// full list for diffing, and search. Package app/api keeps the route table,
// auth and the error mapping; the handlers use app/api/httpx.
package listings

import (
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/internal/apitime"
)

// Deps are what the handlers use.
type Deps struct {
	Listings *listings.Service
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers over the service.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// listingsState is what the listings handlers share: the feature over the
// server's database and, with an embedder, the vector side.
type listingsState struct {
	svc *listings.Service
}

// syncResponse is the body of POST /api/v1/listings/sync. Fields are in
// the order the API has always sent them.
type syncResponse struct {
	Data struct {
		Deleted   int         `json:"deleted"`
		Failed    int         `json:"failed"`
		Imported  int         `json:"imported"`
		Results   syncResults `json:"results"`
		Unchanged int         `json:"unchanged"`
		Updated   int         `json:"updated"`
	} `json:"data"`
	Meta struct {
		Message   string `json:"message"`
		Timestamp string `json:"timestamp"`
	} `json:"meta"`
}

// syncResults lists the items of a sync by outcome, [] rather than null.
type syncResults struct {
	Failed    []listings.SyncItem `json:"failed"`
	Imported  []listings.SyncItem `json:"imported"`
	Unchanged []listings.SyncItem `json:"unchanged"`
	Updated   []listings.SyncItem `json:"updated"`
}

func (h *Handlers) SyncListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body listings.SyncBody
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	rep, err := h.d.Listings.SyncFromBody(r.Context(), httpx.OrgID(r), body)
	if err != nil {
		return err
	}
	var out syncResponse
	d := &out.Data
	d.Imported, d.Updated, d.Unchanged = len(rep.Imported), len(rep.Updated), len(rep.Unchanged)
	d.Failed, d.Deleted = len(rep.Failed), rep.Deleted
	d.Results = syncResults{Imported: nonNilItems(rep.Imported), Updated: nonNilItems(rep.Updated),
		Unchanged: nonNilItems(rep.Unchanged), Failed: nonNilItems(rep.Failed)}
	out.Meta.Message, out.Meta.Timestamp = rep.Message(), apitime.Format(httpx.Now())
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func nonNilItems(s []listings.SyncItem) []listings.SyncItem {
	if s == nil {
		return []listings.SyncItem{}
	}
	return s
}

// listingSummary is one listing of GET /api/v1/listings/sync.
type listingSummary struct {
	ExternalID string  `json:"externalId"`
	ID         string  `json:"id"`
	Price      *string `json:"price"`
	SourceURL  *string `json:"sourceUrl"`
	Status     string  `json:"status"`
	Title      string  `json:"title"`
	UpdatedAt  string  `json:"updatedAt"`
}

// timestampMeta is the {timestamp} meta object of a response.
type timestampMeta struct {
	Timestamp string `json:"timestamp"`
}

// listResponse is the body of GET /api/v1/listings/sync.
type listResponse struct {
	Data struct {
		Listings []listingSummary `json:"listings"`
		Total    int              `json:"total"`
	} `json:"data"`
	Meta timestampMeta `json:"meta"`
}

func (h *Handlers) ListListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ls, total, err := h.d.Listings.List(r.Context(), httpx.OrgID(r), r.URL.Query().Get("category"))
	if err != nil {
		return err
	}
	var out listResponse
	out.Data.Listings = make([]listingSummary, len(ls))
	for i, l := range ls {
		out.Data.Listings[i] = listingSummary{
			ID: l.ID, ExternalID: l.ExternalID, Title: l.Title, Price: listings.Price(l),
			Status: "active", SourceURL: nullable(l.SourceURL), UpdatedAt: apitime.Format(l.UpdatedAt),
		}
	}
	out.Data.Total, out.Meta.Timestamp = total, apitime.Format(httpx.Now())
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listingResult is one hit of GET /api/v1/listings/search.
type listingResult struct {
	Attributes  json.RawMessage `json:"attributes"`
	Category    *string         `json:"category"`
	Currency    string          `json:"currency"`
	Description string          `json:"description"`
	ExternalID  string          `json:"externalId"`
	ID          string          `json:"id"`
	Price       *string         `json:"price"`
	Score       *float64        `json:"score"`
	SourceURL   *string         `json:"sourceUrl"`
	Title       string          `json:"title"`
}

// searchResponse is the body of GET /api/v1/listings/search.
type searchResponse struct {
	Data struct {
		Results []listingResult `json:"results"`
	} `json:"data"`
	Meta timestampMeta `json:"meta"`
}

func (h *Handlers) SearchListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	hits, err := h.d.Listings.SearchParams(r.Context(), httpx.OrgID(r), r.URL.Query())
	if err != nil {
		return err
	}
	var out searchResponse
	out.Data.Results = make([]listingResult, len(hits))
	for i, h := range hits {
		l := h.Listing
		out.Data.Results[i] = listingResult{
			ID: l.ID, ExternalID: l.ExternalID, Title: l.Title, Description: l.Description,
			Category: nullable(l.Category), Price: listings.Price(l), Currency: l.Currency,
			Attributes: l.Attributes, SourceURL: nullable(l.SourceURL), Score: h.Score,
		}
	}
	out.Meta.Timestamp = apitime.Format(httpx.Now())
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// nullable sends "" as JSON null.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
