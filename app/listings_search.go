package app

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/search"
)

// Listing search limits.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 100
	maxSearchQuery     = 1000
	rrfK               = 60 // reciprocal rank fusion constant
	// minVectorScore drops vector hits that share no meaning with the query
	// (cosine near zero), so a text query does not return every listing.
	minVectorScore = 0.1
)

// ListingQuery is a parsed GET /api/v1/listings/search.
type ListingQuery struct {
	Text   string
	Filter storage.ListingFilter
	Limit  int
}

// parseListingQuery reads q, category, minPrice, maxPrice, attr.<key> (a
// repeated key matches any of its values) and limit; problems are 400s
// with details.
func parseListingQuery(orgID string, v url.Values) (ListingQuery, error) {
	q := ListingQuery{Limit: defaultSearchLimit, Filter: storage.ListingFilter{OrgID: orgID}}
	var details []FieldError
	q.Text = strings.TrimSpace(v.Get("q"))
	if utf8.RuneCountInString(q.Text) > maxSearchQuery {
		details = append(details, FieldError{Path: "q", Message: "must be at most 1000 characters"})
	}
	if c := strings.TrimSpace(v.Get("category")); c != "" {
		q.Filter.Category = &c
	}
	price := func(name string) *int64 {
		s := strings.TrimSpace(v.Get(name))
		if s == "" {
			return nil
		}
		c, err := parseCents(s)
		if err != nil {
			details = append(details, FieldError{Path: name, Message: err.Error()})
			return nil
		}
		return &c
	}
	q.Filter.MinCents, q.Filter.MaxCents = price("minPrice"), price("maxPrice")
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxSearchLimit {
			details = append(details, FieldError{Path: "limit", Message: "must be an integer from 1 to 100"})
		} else {
			q.Limit = n
		}
	}
	keys := make([]string, 0)
	for k := range v {
		if strings.HasPrefix(k, "attr.") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	byKey := map[string]int{}
	for _, k := range keys {
		key := normAttrKey(strings.TrimPrefix(k, "attr."))
		if key == "" {
			details = append(details, FieldError{Path: k, Message: "attribute name is empty"})
			continue
		}
		i, ok := byKey[key]
		if !ok {
			i = len(q.Filter.Attrs)
			byKey[key] = i
			q.Filter.Attrs = append(q.Filter.Attrs, storage.AttrFilter{Key: key})
		}
		for _, val := range v[k] {
			q.Filter.Attrs[i].Values = append(q.Filter.Attrs[i].Values, attrTextForms(val)...)
		}
	}
	if len(q.Filter.Attrs) > 20 {
		details = append(details, FieldError{Path: "attr", Message: "at most 20 attribute filters"})
	}
	if len(details) > 0 {
		return q, &Error{Kind: errs.Invalid, Message: "Invalid search: " + details[0].Path + " " + details[0].Message, Details: details}
	}
	return q, nil
}

// ListingHit is one search result; Score is nil when there was no text query.
type ListingHit struct {
	Listing storage.Listing
	Score   *float64
}

// SearchListings runs a listing search: without text, the filtered listings
// newest first; with text, keyword (BM25) and vector rankings within the
// filter fused by reciprocal rank.
func SearchListings(ctx context.Context, db *storage.DB, vec *ListingVectors, q ListingQuery) ([]ListingHit, error) {
	if q.Text == "" {
		ls, err := db.FilterListings(ctx, q.Filter, q.Limit)
		if err != nil {
			return nil, err
		}
		out := make([]ListingHit, len(ls))
		for i, l := range ls {
			out[i] = ListingHit{Listing: l}
		}
		return out, nil
	}
	depth := max(50, 5*q.Limit)
	// The filter's matches restrict both rankings; nil means no filter.
	var allow []int64
	var allowSet map[int64]bool
	if !q.Filter.Empty() {
		var err error
		if allow, err = db.FilterListingSeqs(ctx, q.Filter); err != nil {
			return nil, err
		}
		if len(allow) == 0 {
			return []ListingHit{}, nil
		}
		allowSet = make(map[int64]bool, len(allow))
		for _, s := range allow {
			allowSet[s] = true
		}
	}
	kw, err := db.KeywordListings(ctx, q.Filter.OrgID, q.Text, allowSet, depth)
	if err != nil {
		return nil, err
	}
	lists := [][]int64{kw}
	if vec.enabled() && vec.Index != nil {
		vs, err := vectorListings(ctx, vec, q, allow, depth)
		if err != nil {
			return nil, err
		}
		lists = append(lists, vs)
	}
	seqs, scores := fuseRRF(lists, q.Limit)
	ls, err := db.ListingsBySeq(ctx, q.Filter.OrgID, seqs)
	if err != nil {
		return nil, err
	}
	out := make([]ListingHit, len(ls))
	for i, l := range ls {
		sc := scores[l.Seq]
		out[i] = ListingHit{Listing: l, Score: &sc}
	}
	return out, nil
}

// vectorListings ranks by similarity to the query, within allow when it
// is not nil.
func vectorListings(ctx context.Context, vec *ListingVectors, q ListingQuery, allow []int64, depth int) ([]int64, error) {
	vecs, err := vec.Embedder.Embed(ctx, []string{q.Text})
	if err != nil || len(vecs) != 1 {
		return nil, &Error{Kind: errs.Unavailable, Message: "embedding service unavailable", Err: err}
	}
	hits, err := vec.Index.Search(ctx, listingSpace(q.Filter.OrgID), vecs[0], depth, allow)
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(hits))
	for _, h := range hits {
		if h.Score >= minVectorScore {
			out = append(out, h.ID)
		}
	}
	return out, nil
}

// fuseRRF merges rankings by reciprocal rank fusion (the engine's, shared
// with knowledge search) and keeps the best n.
func fuseRRF(lists [][]int64, n int) ([]int64, map[int64]float64) {
	fused := search.FuseRRF(rrfK, lists...)
	out := make([]int64, 0, min(n, len(fused)))
	scores := make(map[int64]float64, len(fused))
	for _, f := range fused {
		scores[f.ID] = f.Score
		if len(out) < n {
			out = append(out, f.ID)
		}
	}
	return out, scores
}

func (s *Server) searchListings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q, err := parseListingQuery(orgID(r), r.URL.Query())
	if err != nil {
		return err
	}
	hits, err := SearchListings(r.Context(), s.db, s.listings.vectors, q)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(hits))
	for i, h := range hits {
		l := h.Listing
		var score any
		if h.Score != nil {
			score = *h.Score
		}
		out[i] = map[string]any{
			"id": l.ID, "externalId": l.ExternalID, "title": l.Title, "description": l.Description,
			"category": listingNullable(l.Category), "price": priceOf(l), "currency": l.Currency,
			"attributes": l.Attributes, "sourceUrl": listingNullable(l.SourceURL), "score": score,
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"results": out}, "meta": s.meta()})
	return nil
}
