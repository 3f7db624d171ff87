package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/agentd/agentd/app/dashboard"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/internal/errs"
)

// Listing search has no offset: "more" asks for a longer list, up to the
// search's limit of 100.
const (
	listingsStep = 25
	listingsMax  = 100
)

// listingRow is one listing as the table shows it.
type listingRow struct {
	Listing listings.Listing
	Price   string
	Attrs   []attr
	Score   *float64
}

type attr struct{ Key, Value string }

type listingsData struct {
	Categories []dashboard.CategoryCount
	Category   string
	Query      string
	MinPrice   string
	MaxPrice   string
	Attrs      string // "key=value, key=value"
	Rows       []listingRow
	MoreURL    string
}

func (s *Site) listingsPage(w http.ResponseWriter, r *http.Request, u user) error {
	q := r.URL.Query()
	d := listingsData{Category: q.Get("category"), Query: q.Get("q"), MinPrice: q.Get("minPrice"),
		MaxPrice: q.Get("maxPrice"), Attrs: q.Get("attrs")}
	cats, err := s.f.Dashboard.ListingCategories(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	d.Categories = cats
	limit, _ := strconv.Atoi(q.Get("limit"))
	limit = min(max(limit, listingsStep), listingsMax)
	params := url.Values{"limit": {strconv.Itoa(limit)}}
	for k, v := range map[string]string{"category": d.Category, "q": d.Query, "minPrice": d.MinPrice, "maxPrice": d.MaxPrice} {
		if v != "" {
			params.Set(k, v)
		}
	}
	for _, pair := range strings.Split(d.Attrs, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if k, v = strings.TrimSpace(k), strings.TrimSpace(v); ok && k != "" {
			params.Add("attr."+k, v)
		}
	}
	p := page{Title: "Listings", Nav: "listings", User: u, Data: &d}
	status := http.StatusOK
	hits, err := s.f.Listings.SearchParams(r.Context(), u.OrgID, params)
	if err != nil {
		var e *errs.Error
		if !asErr(err, &e) || e.Kind == errs.Internal {
			return err
		}
		p.Error, status = e.Message, s.status(err)
	}
	for _, h := range hits {
		row := listingRow{Listing: h.Listing, Score: h.Score}
		if pr := listings.Price(h.Listing); pr != nil {
			row.Price = *pr + " " + h.Listing.Currency
		}
		var m map[string]any
		_ = json.Unmarshal(h.Listing.Attributes, &m)
		for k, v := range m {
			b, _ := json.Marshal(v)
			row.Attrs = append(row.Attrs, attr{k, strings.Trim(string(b), `"`)})
		}
		sort.Slice(row.Attrs, func(i, j int) bool { return row.Attrs[i].Key < row.Attrs[j].Key })
		d.Rows = append(d.Rows, row)
	}
	if len(hits) == limit && limit < listingsMax {
		more := r.URL.Query()
		more.Set("limit", strconv.Itoa(min(limit+listingsStep, listingsMax)))
		d.MoreURL = "/listings?" + more.Encode()
	}
	s.render(w, r, status, "listings", p)
	return nil
}
