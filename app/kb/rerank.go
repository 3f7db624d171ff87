package kb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"time"

	"github.com/agentd/agentd/embed"
)

// Reranker defaults.
const (
	DefaultRerankTimeout = 2 * time.Second
	DefaultRerankDepth   = 30
	MaxRerankDepth       = 200
)

// RerankInfo says what the reranker did to a search: applied, or skipped
// with the reason (the hybrid order then stands). Nil: no reranker is
// configured or the mode is not hybrid.
type RerankInfo struct {
	Applied bool   `json:"applied"`
	Model   string `json:"model"`
	Skipped string `json:"skipped,omitempty"`
}

func newReranker(cfg Config) (embed.Reranker, error) {
	if cfg.TestReranker != nil {
		return cfg.TestReranker, nil
	}
	switch cfg.Rerank {
	case "", "none":
		return nil, nil
	case "http":
		u, err := url.Parse(cfg.RerankURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errors.New("--rerank-url must be an http(s) URL when --rerank is http")
		}
		if cfg.RerankModel == "" {
			return nil, errors.New("--rerank-model is required when --rerank is http")
		}
		return &embed.HTTPReranker{URL: cfg.RerankURL, Model: cfg.RerankModel, APIKey: cfg.RerankAPIKey}, nil
	}
	return nil, fmt.Errorf("--rerank must be none or http, not %q", cfg.Rerank)
}

// Reranker is the configured reranker (nil: none), for the doctor.
func (s *Service) Reranker() embed.Reranker { return s.rerank }

// rerankResults reorders the hybrid search's top results by the
// reranker's scores; a reranker that fails or is too slow leaves them as
// they are, and the info says why.
func (s *Service) rerankResults(ctx context.Context, query string, res []Result) ([]Result, *RerankInfo) {
	info := &RerankInfo{Model: s.rerank.Name()}
	if len(res) < 2 {
		info.Applied = true
		return res, info
	}
	timeout := s.cfg.RerankTimeout
	if timeout <= 0 {
		timeout = DefaultRerankTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	docs := make([]string, len(res))
	for i, r := range res {
		docs[i] = r.Title + "\n" + r.Content
	}
	scores, err := s.rerank.Rerank(rctx, query, docs)
	if err != nil {
		info.Skipped = err.Error()
		if errors.Is(err, context.DeadlineExceeded) || rctx.Err() != nil {
			info.Skipped = fmt.Sprintf("reranker did not answer within %s", timeout)
		}
		s.log.WarnContext(ctx, "reranker skipped: hybrid order kept", "reason", info.Skipped)
		return res, info
	}
	idx := make([]int, len(res))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	out := make([]Result, len(res))
	for i, j := range idx {
		out[i] = res[j]
		out[i].Score = scores[j]
	}
	info.Applied = true
	return out, info
}

// rerankDepth is how many hybrid results the reranker sees.
func (s *Service) rerankDepth(limit int) int {
	d := s.cfg.RerankDepth
	if d <= 0 {
		d = DefaultRerankDepth
	}
	return max(limit, min(d, MaxRerankDepth))
}
