package kb

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/search"
)

// Search modes: hybrid fuses keyword and semantic rankings; the other two
// use one ranking alone.
const (
	ModeHybrid   = "hybrid"
	ModeSemantic = "semantic"
	ModeKeyword  = "keyword"
)

// SearchInput is a search as the API takes it; pointers tell a missing
// field from a zero one.
type SearchInput struct {
	CollectionID string         `json:"collectionId"`
	Query        *string        `json:"query"`
	Limit        *int           `json:"limit"`
	ContentRole  *string        `json:"contentRole"`
	Metadata     map[string]any `json:"metadata"`
	Mode         string         `json:"mode"`
}

// SearchRequest is a validated search.
type SearchRequest struct {
	CollectionID string
	Query        string
	Limit        int
	Mode         string
	Filter       storage.KBFilter
}

// Result is one search hit: a chunk with its source.
type Result struct {
	DocumentID  string   `json:"documentId"`
	ExternalID  string   `json:"externalId"`
	Title       string   `json:"title"`
	ChunkIndex  int      `json:"chunkIndex"`
	HeadingPath []string `json:"headingPath"`
	Content     string   `json:"content"`
	Score       float64  `json:"score"`
	// FoundBy says which ranking found the chunk: keyword, semantic or
	// both (the dashboard's playground shows it; the API does not).
	FoundBy string `json:"-"`
}

// Validate checks a search and fills its defaults (limit 5, mode hybrid).
func (b SearchInput) Validate() (SearchRequest, error) {
	req := SearchRequest{CollectionID: b.CollectionID, Limit: 5, Mode: b.Mode}
	switch {
	case b.CollectionID == "":
		return req, invalid("collectionId", "collectionId is required")
	case b.Query == nil || strings.TrimSpace(*b.Query) == "":
		return req, invalid("query", "query is required")
	case utf8.RuneCountInString(*b.Query) > 4000:
		return req, invalid("query", "query too long, max 4000 characters")
	case b.Limit != nil && (*b.Limit < 1 || *b.Limit > 50):
		return req, invalid("limit", "limit must be between 1 and 50")
	case b.ContentRole != nil && !ValidContentRole(*b.ContentRole):
		return req, invalid("contentRole", "contentRole must be 1 to 64 characters of a-z, 0-9, _ or -")
	}
	req.Query = *b.Query
	if b.Limit != nil {
		req.Limit = *b.Limit
	}
	switch req.Mode {
	case "":
		req.Mode = ModeHybrid
	case ModeHybrid, ModeSemantic, ModeKeyword:
	default:
		return req, invalid("mode", "mode must be hybrid, semantic or keyword")
	}
	if b.ContentRole != nil {
		req.Filter.ContentRole = *b.ContentRole
	}
	for k, v := range b.Metadata {
		switch v.(type) {
		case string, float64, bool:
		default:
			return req, errs.InvalidField("metadata."+k, "filter values must be strings, numbers or booleans")
		}
		if k == "" {
			return req, invalid("metadata", "metadata: keys must not be empty")
		}
	}
	req.Filter.Metadata = b.Metadata
	return req, nil
}

// Search validates a search and runs it on a collection of the
// organization.
func (s *Service) Search(ctx context.Context, orgID string, in SearchInput) ([]Result, error) {
	req, err := in.Validate()
	if err != nil {
		return nil, err
	}
	c, err := s.Collection(ctx, orgID, req.CollectionID)
	if err != nil {
		return nil, err
	}
	req.CollectionID = c.ID
	return s.search(ctx, req)
}

// hybridDepth is how many candidates each ranking contributes to the fusion.
func hybridDepth(limit int) int { return max(4*limit, 40) }

// search runs a validated search on a collection the caller owns.
func (s *Service) search(ctx context.Context, req SearchRequest) ([]Result, error) {
	var ids []int64
	scores := map[int64]float64{}
	found := map[int64]string{}
	switch req.Mode {
	case ModeKeyword:
		hits, err := s.keywordSearch(ctx, req, req.Limit)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			ids = append(ids, h.ID)
			scores[h.ID] = h.Score
			found[h.ID] = ModeKeyword
		}
	case ModeSemantic:
		hits, err := s.semanticSearch(ctx, req, req.Limit)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			ids = append(ids, h.ID)
			scores[h.ID] = float64(h.Score)
			found[h.ID] = ModeSemantic
		}
	default:
		depth := hybridDepth(req.Limit)
		kw, err := s.keywordSearch(ctx, req, depth)
		if err != nil {
			return nil, err
		}
		vh, err := s.semanticSearch(ctx, req, depth)
		if err != nil {
			// Keyword results still answer when the embedding service is down.
			s.log.WarnContext(ctx, "semantic part of hybrid search failed", "err", err)
			vh = nil
		}
		kwIDs := make([]int64, len(kw))
		for i, h := range kw {
			kwIDs[i] = h.ID
			found[h.ID] = ModeKeyword
		}
		vIDs := make([]int64, len(vh))
		for i, h := range vh {
			vIDs[i] = h.ID
			if found[h.ID] == ModeKeyword {
				found[h.ID] = "both"
			} else {
				found[h.ID] = ModeSemantic
			}
		}
		for _, f := range search.FuseRRF(search.RRFK, kwIDs, vIDs) {
			if len(ids) == req.Limit {
				break
			}
			ids = append(ids, f.ID)
			scores[f.ID] = f.Score
		}
	}
	chunks, err := s.db.KBChunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(ids))
	for _, id := range ids {
		c, ok := chunks[id]
		if !ok {
			continue // deleted between the ranking and the read
		}
		out = append(out, Result{DocumentID: c.SourceID, ExternalID: c.ExternalID, Title: c.Title, ChunkIndex: c.ChunkIndex,
			HeadingPath: c.HeadingPath, Content: c.Content, Score: scores[id], FoundBy: found[id]})
	}
	return out, nil
}

// keywordSearch ranks the collection's chunks by BM25 (in-memory index)
// and keeps the k best that pass the filter.
func (s *Service) keywordSearch(ctx context.Context, req SearchRequest, k int) ([]storage.ScoredID, error) {
	allow, err := s.db.KBAllowedChunks(ctx, req.CollectionID, req.Filter)
	if err != nil {
		return nil, err
	}
	return s.text.Search(ctx, storage.KBSpace(req.CollectionID), req.Query, k, allow)
}

// semanticSearch embeds the query and finds the k nearest chunks that pass
// the filter.
func (s *Service) semanticSearch(ctx context.Context, req SearchRequest, k int) ([]storage.VectorHit, error) {
	vecs, err := s.emb.Embed(ctx, []string{req.Query})
	if err != nil || len(vecs) != 1 {
		return nil, errs.Wrap(errs.Unavailable, "embedding service unavailable; try mode keyword", err)
	}
	allow, err := s.db.KBAllowedChunks(ctx, req.CollectionID, req.Filter)
	if err != nil {
		return nil, err
	}
	return s.index.Search(ctx, storage.KBSpace(req.CollectionID), vecs[0], k, allow)
}
