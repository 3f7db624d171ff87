package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Reranker orders documents by their relevance to a query (a
// cross-encoder), after the hybrid search found them.
type Reranker interface {
	// Rerank returns the documents' relevance scores, by index.
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
	Name() string
}

// HTTPReranker speaks the /rerank API that Text Embeddings Inference,
// Infinity, Jina, Cohere and llama.cpp's server share: POST {model,
// query, documents, top_n} answered {results: [{index, relevance_score}]}
// (TEI's bare [{index, score}] is read too).
type HTTPReranker struct {
	URL    string // the base URL; /rerank is appended
	Model  string
	APIKey string // a bearer token; never logged
	Client *http.Client
}

// maxRerankAnswer bounds the answer read.
const maxRerankAnswer = 4 << 20

// Name names the service for logs and the doctor.
func (r *HTTPReranker) Name() string { return "http (" + r.Model + ")" }

// Rerank asks the service; the context bounds the request.
func (r *HTTPReranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	body, _ := json.Marshal(map[string]any{"model": r.Model, "query": query, "documents": docs, "texts": docs,
		"top_n": len(docs), "return_documents": false})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(r.URL, "/")+"/rerank", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("reranker: invalid URL")
	}
	req.Header.Set("Content-Type", "application/json")
	if r.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	c := r.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reranker unavailable: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxRerankAnswer))
	if err != nil {
		return nil, fmt.Errorf("reranker unavailable: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reranker answered HTTP %d", resp.StatusCode)
	}
	return parseRerank(raw, len(docs))
}

type rerankItem struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

// parseRerank reads either answer shape; every document must be scored
// once (a missing or repeated index is an error, not a silent gap).
func parseRerank(raw []byte, n int) ([]float64, error) {
	var wrapped struct {
		Results []rerankItem `json:"results"`
	}
	var items []rerankItem
	if err := json.Unmarshal(raw, &wrapped); err == nil && wrapped.Results != nil {
		items = wrapped.Results
	} else if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New("reranker: answer is not a list of scores")
	}
	scores := make([]float64, n)
	seen := make([]bool, n)
	for _, it := range items {
		if it.Index == nil || *it.Index < 0 || *it.Index >= n || seen[*it.Index] {
			return nil, errors.New("reranker: answer has a missing, repeated or out-of-range index")
		}
		s := it.RelevanceScore
		if s == nil {
			s = it.Score
		}
		if s == nil {
			return nil, errors.New("reranker: answer item without a score")
		}
		seen[*it.Index], scores[*it.Index] = true, *s
	}
	for _, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("reranker: scored %d of %d documents", len(items), n)
		}
	}
	return scores, nil
}

// unwrapURL drops the *url.Error wrapper, whose text names the URL.
func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
