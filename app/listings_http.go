package app

import (
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/listings"
)

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

func (s *Server) syncListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body listings.SyncBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	rep, err := s.listings.svc.SyncFromBody(r.Context(), orgID(r), body)
	if err != nil {
		return err
	}
	var out syncResponse
	d := &out.Data
	d.Imported, d.Updated, d.Unchanged = len(rep.Imported), len(rep.Updated), len(rep.Unchanged)
	d.Failed, d.Deleted = len(rep.Failed), rep.Deleted
	d.Results = syncResults{Imported: nonNilItems(rep.Imported), Updated: nonNilItems(rep.Updated),
		Unchanged: nonNilItems(rep.Unchanged), Failed: nonNilItems(rep.Failed)}
	out.Meta.Message, out.Meta.Timestamp = rep.Message(), formatTime(s.now())
	writeJSON(w, http.StatusOK, out)
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

func (s *Server) listListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ls, total, err := s.listings.svc.List(r.Context(), orgID(r), r.URL.Query().Get("category"))
	if err != nil {
		return err
	}
	var out listResponse
	out.Data.Listings = make([]listingSummary, len(ls))
	for i, l := range ls {
		out.Data.Listings[i] = listingSummary{
			ID: l.ID, ExternalID: l.ExternalID, Title: l.Title, Price: listings.Price(l),
			Status: "active", SourceURL: nullable(l.SourceURL), UpdatedAt: formatTime(l.UpdatedAt),
		}
	}
	out.Data.Total, out.Meta.Timestamp = total, formatTime(s.now())
	writeJSON(w, http.StatusOK, out)
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

func (s *Server) searchListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	hits, err := s.listings.svc.SearchParams(r.Context(), orgID(r), r.URL.Query())
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
	out.Meta.Timestamp = formatTime(s.now())
	writeJSON(w, http.StatusOK, out)
	return nil
}

// nullable sends "" as JSON null.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
