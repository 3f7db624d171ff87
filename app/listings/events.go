package listings

import (
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/storage/listingstore"
)

// listingEventView is a listing as GET /api/v1/listings/sync lists it.
type listingEventView struct {
	ID         string  `json:"id"`
	ExternalID string  `json:"externalId"`
	Title      string  `json:"title"`
	Price      any     `json:"price"`
	Status     string  `json:"status"`
	SourceURL  *string `json:"sourceUrl"`
	UpdatedAt  string  `json:"updatedAt"`
}

// EventView is a listing in the data of listings.sync.completed.
func EventView(l listingstore.Listing) any {
	var src *string
	if l.SourceURL != "" {
		src = &l.SourceURL
	}
	return listingEventView{ID: l.ID, ExternalID: l.ExternalID, Title: l.Title, Price: Price(l), Status: "active",
		SourceURL: src, UpdatedAt: apitime.Format(l.UpdatedAt)}
}
