package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// Search modes of POST /api/v1/kb/search.
const (
	kbModeHybrid   = "hybrid"
	kbModeSemantic = "semantic"
	kbModeKeyword  = "keyword"
)

// kbSearchRequest is a validated search.
type kbSearchRequest struct {
	CollectionID string
	Query        string
	Limit        int
	Mode         string
	Filter       storage.KBFilter
}

// KBResult is one search hit: a chunk with its source.
type KBResult struct {
	DocumentID  string   `json:"documentId"`
	ExternalID  string   `json:"externalId"`
	Title       string   `json:"title"`
	ChunkIndex  int      `json:"chunkIndex"`
	HeadingPath []string `json:"headingPath"`
	Content     string   `json:"content"`
	Score       float64  `json:"score"`
}

func parseKBSearch(r *http.Request) (kbSearchRequest, error) {
	var body struct {
		CollectionID string         `json:"collectionId"`
		Query        *string        `json:"query"`
		Limit        *int           `json:"limit"`
		ContentRole  *string        `json:"contentRole"`
		Metadata     map[string]any `json:"metadata"`
		Mode         string         `json:"mode"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return kbSearchRequest{}, err
	}
	req := kbSearchRequest{CollectionID: body.CollectionID, Limit: 5, Mode: body.Mode}
	switch {
	case body.CollectionID == "":
		return req, badRequest("collectionId is required")
	case body.Query == nil || strings.TrimSpace(*body.Query) == "":
		return req, badRequest("query is required")
	case utf8.RuneCountInString(*body.Query) > 4000:
		return req, badRequest("query too long, max 4000 characters")
	case body.Limit != nil && (*body.Limit < 1 || *body.Limit > 50):
		return req, badRequest("limit must be between 1 and 50")
	case body.ContentRole != nil && !validContentRole(*body.ContentRole):
		return req, badRequest("contentRole must be 1 to 64 characters of a-z, 0-9, _ or -")
	}
	req.Query = *body.Query
	if body.Limit != nil {
		req.Limit = *body.Limit
	}
	switch req.Mode {
	case "":
		req.Mode = kbModeHybrid
	case kbModeHybrid, kbModeSemantic, kbModeKeyword:
	default:
		return req, badRequest("mode must be hybrid, semantic or keyword")
	}
	if body.ContentRole != nil {
		req.Filter.ContentRole = *body.ContentRole
	}
	for k, v := range body.Metadata {
		switch v.(type) {
		case string, float64, bool:
		default:
			return req, badRequest(fmt.Sprintf("metadata.%s: filter values must be strings, numbers or booleans", k))
		}
		if k == "" {
			return req, badRequest("metadata: keys must not be empty")
		}
	}
	req.Filter.Metadata = body.Metadata
	return req, nil
}

func (s *Server) searchKB(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	req, err := parseKBSearch(r)
	if err != nil {
		return err
	}
	c, err := s.collection(r, req.CollectionID)
	if err != nil {
		return err
	}
	req.CollectionID = c.ID
	res, err := s.kbSearch(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"results": res}, "meta": s.meta()})
	return nil
}

// kbHybridDepth is how many candidates each ranking contributes to the fusion.
func kbHybridDepth(limit int) int { return max(4*limit, 40) }

// kbSearch runs a validated search on a collection the caller owns.
func (s *Server) kbSearch(ctx context.Context, req kbSearchRequest) ([]KBResult, error) {
	var ids []int64
	scores := map[int64]float64{}
	switch req.Mode {
	case kbModeKeyword:
		hits, err := s.keywordSearch(ctx, req, req.Limit)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			ids = append(ids, h.ID)
			scores[h.ID] = h.Score
		}
	case kbModeSemantic:
		hits, err := s.semanticSearch(ctx, req, req.Limit)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			ids = append(ids, h.ID)
			scores[h.ID] = float64(h.Score)
		}
	default:
		depth := kbHybridDepth(req.Limit)
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
		}
		vIDs := make([]int64, len(vh))
		for i, h := range vh {
			vIDs[i] = h.ID
		}
		for _, f := range storage.FuseRRF(storage.RRFK, kwIDs, vIDs) {
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
	out := make([]KBResult, 0, len(ids))
	for _, id := range ids {
		c, ok := chunks[id]
		if !ok {
			continue // deleted between the ranking and the read
		}
		out = append(out, KBResult{DocumentID: c.SourceID, ExternalID: c.ExternalID, Title: c.Title, ChunkIndex: c.ChunkIndex,
			HeadingPath: c.HeadingPath, Content: c.Content, Score: scores[id]})
	}
	return out, nil
}

// keywordSearch ranks the collection's chunks by BM25 (in-memory index)
// and keeps the k best that pass the filter.
func (s *Server) keywordSearch(ctx context.Context, req kbSearchRequest, k int) ([]storage.ScoredID, error) {
	allow, err := s.db.KBAllowedChunks(ctx, req.CollectionID, req.Filter)
	if err != nil {
		return nil, err
	}
	return s.kb.text.Search(ctx, storage.KBSpace(req.CollectionID), req.Query, k, allow)
}

// semanticSearch embeds the query and finds the k nearest chunks that pass
// the filter.
func (s *Server) semanticSearch(ctx context.Context, req kbSearchRequest, k int) ([]storage.VectorHit, error) {
	vecs, err := s.kb.emb.Embed(ctx, []string{req.Query})
	if err != nil || len(vecs) != 1 {
		return nil, &Error{Kind: errs.Unavailable, Message: "embedding service unavailable; try mode keyword", Err: err}
	}
	allow, err := s.db.KBAllowedChunks(ctx, req.CollectionID, req.Filter)
	if err != nil {
		return nil, err
	}
	return s.kb.index.Search(ctx, storage.KBSpace(req.CollectionID), vecs[0], k, allow)
}
