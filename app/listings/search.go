package listings

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/search"
)

// Listing search limits.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 100
	maxSearchQuery     = 1000
	// minVectorScore drops vector hits that share no meaning with the query
	// (cosine near zero), so a text query does not return every listing.
	minVectorScore = 0.1
)

// Query is a parsed listing search (GET /api/v1/listings/search).
type Query struct {
	Text   string
	Filter storage.ListingFilter
	Limit  int
}

// ParseQuery reads q, category, minPrice, maxPrice, attr.<key> (a repeated
// key matches any of its values) and limit; problems are an Invalid error
// with every field in its Details.
func ParseQuery(orgID string, v url.Values) (Query, error) {
	q := Query{Limit: defaultSearchLimit, Filter: storage.ListingFilter{OrgID: orgID}}
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
			q.Filter.Attrs = append(q.Filter.Attrs, storage.AttrFilter{Key: key})
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
	Listing storage.Listing
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
// newest first; with text, keyword (BM25) and vector rankings within the
// filter, merged by fuse.
func (s *Service) Search(ctx context.Context, q Query) ([]Hit, error) {
	db, vec := s.DB, s.Vectors
	if q.Text == "" {
		ls, err := db.FilterListings(ctx, q.Filter, q.Limit)
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
		if allow, err = db.FilterListingSeqs(ctx, q.Filter); err != nil {
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
	kw, err := db.KeywordListings(ctx, q.Filter.OrgID, q.Text, allowSet, depth)
	if err != nil {
		return nil, err
	}
	lists := [][]int64{kw}
	if vec.enabled() && vec.Index != nil {
		vs, err := vectorRanking(ctx, vec, q, allow, depth)
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
	out := make([]Hit, len(ls))
	for i, l := range ls {
		sc := scores[l.Seq]
		out[i] = Hit{Listing: l, Score: &sc}
	}
	return out, nil
}

// vectorRanking ranks by similarity to the query, within allow when it
// is not nil.
func vectorRanking(ctx context.Context, vec *Vectors, q Query, allow []int64, depth int) ([]int64, error) {
	vecs, err := vec.Embedder.Embed(ctx, []string{q.Text})
	if err != nil || len(vecs) != 1 {
		return nil, errs.Wrap(errs.Unavailable, "embedding service unavailable", err)
	}
	hits, err := vec.Index.Search(ctx, Space(q.Filter.OrgID), vecs[0], depth, allow)
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
	fused := search.FuseRRF(search.RRFK, lists...)
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
