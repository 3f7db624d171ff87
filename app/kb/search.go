package kb

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/kbstore"
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
	Alpha        *float64       `json:"alpha"`
}

// SearchRequest is a validated search.
type SearchRequest struct {
	CollectionID string
	Query        string
	Limit        int
	Mode         string
	Filter       kbstore.KBFilter
	// Alpha, when set, is this search's weight of the semantic half
	// (hybrid mode), over the collection's and the embedder's.
	Alpha *float64
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
	if err := validAlpha("alpha", b.Alpha); err != nil {
		return req, err
	}
	req.Alpha = b.Alpha
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
	res, _, err := s.SearchInfo(ctx, orgID, in)
	return res, err
}

// SearchInfo is Search that also says what the reranker did (nil when none
// ran): the API reports it, so a skipped reranker is never silent.
func (s *Service) SearchInfo(ctx context.Context, orgID string, in SearchInput) ([]Result, *RerankInfo, error) {
	req, err := in.Validate()
	if err != nil {
		return nil, nil, err
	}
	c, err := s.checkCollection(ctx, orgID, req.CollectionID)
	if err != nil {
		return nil, nil, err
	}
	req.CollectionID = c.ID
	if req.Alpha == nil {
		req.Alpha = c.SearchAlpha
	}
	limit := req.Limit
	reranked := s.rerank != nil && req.Mode == ModeHybrid
	if reranked {
		req.Limit = s.rerankDepth(limit)
	}
	res, err := s.search(ctx, req)
	if err != nil || !reranked {
		return res, nil, err
	}
	res, info := s.rerankResults(ctx, req.Query, res)
	return res[:min(len(res), limit)], info, nil
}

// hybridDepth is how many candidates each ranking contributes to the
// fusion; single-mode searches read as deep, since the relevance floor may
// drop some of the best.
func hybridDepth(limit int) int { return max(4*limit, 40) }

// search runs a validated search on a collection the caller owns. Every
// mode applies the relevance floor: a chunk that holds none of the query's
// words (stopwords aside) is returned only when its cosine similarity
// reaches the embedder's MinSimilarity, so a query that matches nothing
// returns nothing. Hybrid ranks by search.FuseScores of both halves' scores.
func (s *Service) search(ctx context.Context, req SearchRequest) ([]Result, error) {
	depth := hybridDepth(req.Limit)
	space := kbstore.KBSpace(req.CollectionID)
	var kw []search.ScoredID
	var vh []search.VectorHit
	var qvec []float32
	var err error
	if req.Mode != ModeSemantic {
		if kw, err = s.keywordSearch(ctx, req, depth); err != nil {
			return nil, err
		}
	}
	if req.Mode != ModeKeyword {
		qvec, vh, err = s.semanticSearch(ctx, req, depth)
		if err != nil {
			if req.Mode == ModeSemantic {
				return nil, err
			}
			// Keyword results still answer when the embedding service is down.
			s.log.WarnContext(ctx, "semantic part of hybrid search failed", "err", err)
		}
	}
	cands, err := s.candidates(ctx, space, req.Query, kw, vh, qvec)
	if err != nil {
		return nil, err
	}
	var ranked []search.Fused
	switch req.Mode {
	case ModeKeyword:
		for _, c := range cands {
			ranked = append(ranked, search.Fused{ID: c.ID, Score: c.Keyword})
		}
	case ModeSemantic:
		for _, c := range cands {
			ranked = append(ranked, search.Fused{ID: c.ID, Score: c.Semantic})
		}
	default:
		alpha := s.tuning.Alpha
		if req.Alpha != nil {
			alpha = *req.Alpha
		}
		if qvec == nil {
			alpha = 0
		}
		ranked = search.FuseScores(cands, alpha)
	}
	ranked = ranked[:min(len(ranked), req.Limit)]
	found := foundBy(req.Mode, kw, vh)
	ids := make([]int64, len(ranked))
	for i, f := range ranked {
		ids[i] = f.ID
	}
	chunks, err := s.db.KB.KBChunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(ids))
	for _, f := range ranked {
		c, ok := chunks[f.ID]
		if !ok {
			continue // deleted between the ranking and the read
		}
		out = append(out, Result{DocumentID: c.SourceID, ExternalID: c.ExternalID, Title: c.Title, ChunkIndex: c.ChunkIndex,
			HeadingPath: c.HeadingPath, Content: c.Content, Score: f.Score, FoundBy: found[f.ID]})
	}
	return out, nil
}

// candidates joins the keyword and the semantic hits (keyword order, then
// the semantic ones not already in), completes each half's score for the
// hits only the other half found, and drops those under the relevance
// floor. qvec nil means no semantic half.
func (s *Service) candidates(ctx context.Context, space, query string, kw []search.ScoredID, vh []search.VectorHit, qvec []float32) ([]search.Candidate, error) {
	ids := make([]int64, 0, len(kw)+len(vh))
	cos := make(map[int64]float64, len(kw)+len(vh))
	for _, h := range kw {
		ids = append(ids, h.ID)
	}
	for _, h := range vh {
		if _, ok := cos[h.ID]; !ok {
			cos[h.ID] = float64(h.Score)
		}
	}
	var missing []int64
	for _, id := range ids {
		if _, ok := cos[id]; !ok {
			missing = append(missing, id)
		}
	}
	seen := make(map[int64]bool, len(kw))
	for _, id := range ids {
		seen[id] = true
	}
	for _, h := range vh {
		if !seen[h.ID] {
			seen[h.ID] = true
			ids = append(ids, h.ID)
		}
	}
	if qvec != nil && len(missing) > 0 {
		hits, err := s.index.Search(ctx, space, qvec, len(missing), missing)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			cos[h.ID] = float64(h.Score)
		}
	}
	match, err := s.text.Match(ctx, space, query, ids)
	if err != nil {
		return nil, err
	}
	return s.tuning.Floor(ids, cos, match), nil
}

// keywordSearch ranks the collection's chunks by BM25 (in-memory index)
// and keeps the k best that pass the filter.
func (s *Service) keywordSearch(ctx context.Context, req SearchRequest, k int) ([]search.ScoredID, error) {
	allow, err := s.db.KB.KBAllowedChunks(ctx, req.CollectionID, req.Filter)
	if err != nil {
		return nil, err
	}
	return s.text.Search(ctx, kbstore.KBSpace(req.CollectionID), req.Query, k, allow)
}

// semanticSearch embeds the query and finds the k nearest chunks that pass
// the filter; it returns the query vector too.
func (s *Service) semanticSearch(ctx context.Context, req SearchRequest, k int) ([]float32, []search.VectorHit, error) {
	vecs, err := s.emb.Embed(ctx, []string{req.Query})
	if err != nil || len(vecs) != 1 {
		return nil, nil, errs.Wrap(errs.Unavailable, "embedding service unavailable; try mode keyword", err)
	}
	allow, err := s.db.KB.KBAllowedChunks(ctx, req.CollectionID, req.Filter)
	if err != nil {
		return nil, nil, err
	}
	hits, err := s.index.Search(ctx, kbstore.KBSpace(req.CollectionID), vecs[0], k, allow)
	return vecs[0], hits, err
}

// foundBy says which ranking found each hit (keyword, semantic or both),
// which the dashboard shows beside a result.
func foundBy(mode string, kw []search.ScoredID, vh []search.VectorHit) map[int64]string {
	found := make(map[int64]string, len(kw)+len(vh))
	if mode != ModeSemantic {
		for _, h := range kw {
			found[h.ID] = ModeKeyword
		}
	}
	if mode != ModeKeyword {
		for _, h := range vh {
			if found[h.ID] == ModeKeyword {
				found[h.ID] = "both"
			} else {
				found[h.ID] = ModeSemantic
			}
		}
	}
	return found
}
