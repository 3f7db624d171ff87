package listings

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/listingstore"
	"github.com/agentd/agentd/storage/search"
)

// Listing search limits.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 100
	maxSearchQuery     = 1000
)

// Query is a parsed listing search (GET /api/v1/listings/search).
type Query struct {
	Text   string
	Filter listingstore.ListingFilter
	Limit  int
}

// ParseQuery reads q, category, minPrice, maxPrice, attr.<key> (a repeated
// key matches any of its values) and limit; problems are an Invalid error
// with every field in its Details.
func ParseQuery(orgID string, v url.Values) (Query, error) {
	q := Query{Limit: defaultSearchLimit, Filter: listingstore.ListingFilter{OrgID: orgID}}
	var details []errs.FieldError
	q.Text = strings.TrimSpace(v.Get("q"))
	if utf8.RuneCountInString(q.Text) > maxSearchQuery {
		details = append(details, errs.FieldError{Path: "q", Message: "must be at most 1000 characters"})
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
			details = append(details, errs.FieldError{Path: name, Message: err.Error()})
			return nil
		}
		return &c
	}
	q.Filter.MinCents, q.Filter.MaxCents = price("minPrice"), price("maxPrice")
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxSearchLimit {
			details = append(details, errs.FieldError{Path: "limit", Message: "must be an integer from 1 to 100"})
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
			details = append(details, errs.FieldError{Path: k, Message: "attribute name is empty"})
			continue
		}
		i, ok := byKey[key]
		if !ok {
			i = len(q.Filter.Attrs)
			byKey[key] = i
			q.Filter.Attrs = append(q.Filter.Attrs, listingstore.AttrFilter{Key: key})
		}
		for _, val := range v[k] {
			q.Filter.Attrs[i].Values = append(q.Filter.Attrs[i].Values, attrTextForms(val)...)
		}
	}
	if len(q.Filter.Attrs) > 20 {
		details = append(details, errs.FieldError{Path: "attr", Message: "at most 20 attribute filters"})
	}
	if len(details) > 0 {
		return q, &errs.Error{Kind: errs.Invalid, Message: "Invalid search: " + details[0].Path + " " + details[0].Message, Details: details}
	}
	return q, nil
}

// Hit is one search result; Score is nil when there was no text query.
type Hit struct {
	Listing listingstore.Listing
	Score   *float64
}

// SearchParams parses a search's query parameters (ParseQuery) and runs it.
func (s *Service) SearchParams(ctx context.Context, orgID string, v url.Values) ([]Hit, error) {
	q, err := ParseQuery(orgID, v)
	if err != nil {
		return nil, err
	}
	return s.Search(ctx, q)
}

// Search runs a listing search: without text, the filtered listings
// newest first; with text, keyword (BM25, every word) and vector rankings
// within the filter, fused by search.FuseScores with the embedder's
// weight. A listing that holds none of the query's words (stopwords aside)
// is returned only when its similarity reaches the embedder's relevance
// floor, so a query that matches nothing returns nothing, and a filter
// only narrows what the query found.
func (s *Service) Search(ctx context.Context, q Query) ([]Hit, error) {
	db, vec := s.DB, s.Vectors
	if q.Text == "" {
		ls, err := db.Listings.FilterListings(ctx, q.Filter, q.Limit)
		if err != nil {
			return nil, err
		}
		out := make([]Hit, len(ls))
		for i, l := range ls {
			out[i] = Hit{Listing: l}
		}
		return out, nil
	}
	depth := max(50, 5*q.Limit)
	// The filter's matches restrict both rankings; nil means no filter.
	var allow []int64
	var allowSet map[int64]bool
	if !q.Filter.Empty() {
		var err error
		if allow, err = db.Listings.FilterListingSeqs(ctx, q.Filter); err != nil {
			return nil, err
		}
		if len(allow) == 0 {
			return []Hit{}, nil
		}
		allowSet = make(map[int64]bool, len(allow))
		for _, s := range allow {
			allowSet[s] = true
		}
	}
	kw, err := db.Listings.KeywordListings(ctx, q.Filter.OrgID, q.Text, allowSet, depth)
	if err != nil {
		return nil, err
	}
	cands, alpha := []search.Candidate(nil), 0.0
	if vec.enabled() && vec.Index != nil {
		alpha = vec.Tuning.Alpha
		cands, err = vec.candidates(ctx, db, q, kw, allow, depth)
	} else {
		cands, err = keywordCandidates(ctx, db, q, kw)
	}
	if err != nil {
		return nil, err
	}
	fused := search.FuseScores(cands, alpha)
	seqs := make([]int64, 0, min(q.Limit, len(fused)))
	scores := make(map[int64]float64, len(fused))
	for _, f := range fused[:min(q.Limit, len(fused))] {
		seqs = append(seqs, f.ID)
		scores[f.ID] = f.Score
	}
	ls, err := db.Listings.ListingsBySeq(ctx, q.Filter.OrgID, seqs)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(ls))
	for i, l := range ls {
		sc := scores[l.Seq]
		out[i] = Hit{Listing: l, Score: &sc}
	}
	return out, nil
}

// keywordCandidates are the keyword hits alone (no embedder), with their
// BM25 scores, less those that hold only stopwords of the query.
func keywordCandidates(ctx context.Context, db Deps, q Query, kw []int64) ([]search.Candidate, error) {
	match, err := db.Listings.ListingTextMatch(ctx, q.Filter.OrgID, q.Text, kw)
	if err != nil {
		return nil, err
	}
	out := make([]search.Candidate, 0, len(kw))
	for i, id := range kw {
		if match[i].Content {
			out = append(out, search.Candidate{ID: id, Keyword: match[i].Score})
		}
	}
	return out, nil
}

// candidates joins the keyword hits and the depth nearest listings within
// allow (nil: all), with both scores of each, less those under the
// relevance floor.
func (v *Vectors) candidates(ctx context.Context, db Deps, q Query, kw, allow []int64, depth int) ([]search.Candidate, error) {
	vecs, err := v.Embedder.Embed(ctx, []string{q.Text})
	if err != nil || len(vecs) != 1 {
		return nil, errs.Wrap(errs.Unavailable, "embedding service unavailable", err)
	}
	space := Space(q.Filter.OrgID)
	hits, err := v.Index.Search(ctx, space, vecs[0], depth, allow)
	if err != nil {
		return nil, err
	}
	ids := append(make([]int64, 0, len(kw)+len(hits)), kw...)
	cos := make(map[int64]float64, len(kw)+len(hits))
	for _, h := range hits {
		cos[h.ID] = float64(h.Score)
	}
	var missing []int64
	seen := make(map[int64]bool, len(kw))
	for _, id := range kw {
		seen[id] = true
		if _, ok := cos[id]; !ok {
			missing = append(missing, id)
		}
	}
	for _, h := range hits {
		if !seen[h.ID] {
			seen[h.ID] = true
			ids = append(ids, h.ID)
		}
	}
	if len(missing) > 0 {
		more, err := v.Index.Search(ctx, space, vecs[0], len(missing), missing)
		if err != nil {
			return nil, err
		}
		for _, h := range more {
			cos[h.ID] = float64(h.Score)
		}
	}
	match, err := db.Listings.ListingTextMatch(ctx, q.Filter.OrgID, q.Text, ids)
	if err != nil {
		return nil, err
	}
	return v.Tuning.Floor(ids, cos, match), nil
}
