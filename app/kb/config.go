// Package kb is the knowledge base: collections, sources, their validation
// (with field paths) and the use cases over storage and embed (upsert,
// batch, list, delete, hybrid search, reindex, the background worker). It
// knows nothing of HTTP: the package app decodes requests, calls it and
// encodes what it returns; the CLI calls it directly.
package kb

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentd/agentd/app/kb/web"
	"github.com/agentd/agentd/embed"
)

// Config configures knowledge processing (embedder, worker). cmd fills it
// from flags and environment, for serve as for reindex and import, so every
// process embeds with the same model.
type Config struct {
	// Embedder is "builtin" (default: offline, deterministic, lexical) or
	// "openai" (any OpenAI-compatible POST /v1/embeddings service).
	Embedder string
	// EmbedDims is the built-in embedder's vector length (default 1024).
	EmbedDims int

	OpenAIBaseURL    string // e.g. https://api.openai.com/v1, http://localhost:11434/v1
	OpenAIAPIKey     string // sent as a bearer token; never logged
	OpenAIModel      string // e.g. text-embedding-3-small
	OpenAIDimensions int    // vector length the model returns (checked on every vector)
	// OpenAISendDimensions sends "dimensions" in requests, for models that
	// shorten their vectors on request (OpenAI text-embedding-3-*).
	OpenAISendDimensions bool
	EmbedBatch           int           // texts per embedding request (default 64)
	EmbedConcurrency     int           // embedding requests in flight (default 2)
	EmbedTimeout         time.Duration // per request (default 30 s)
	EmbedRetries         int           // retries on 429/5xx (default 5)

	// Workers is how many sources are chunked and embedded at once (default 2).
	Workers int
	// Lease is how long a claim on a source outlives its process: a source
	// whose worker stopped renewing it (crashed) is taken over after it
	// (default 15 s; renewed every third of it while processing).
	Lease time.Duration
	// PollInterval is how often the worker looks for sources queued by other
	// processes (default 2 s; writes through this server wake it at once).
	// Negative means wake-only (tests).
	PollInterval time.Duration
	// Retries is how many times a source that failed because the embedding
	// service was unavailable (down, timing out, 429/5xx through its own
	// retries) is tried again without anyone asking (default 5; negative:
	// never). RetryBackoff is the wait before the first retry (default 30 s),
	// doubled for each next one, at most an hour.
	Retries      int
	RetryBackoff time.Duration

	// SearchAlpha, when not 0, replaces the embedder's default weight of the
	// semantic half in hybrid search (a collection or a request may still
	// set their own).
	SearchAlpha float64
	// SearchMinSimilarity, when not 0, replaces the embedder's relevance
	// floor (negative: no floor). Calibrate it for an external model with
	// the evaluation (README "Search quality").
	SearchMinSimilarity float64

	// Rerank is "none" (default) or "http": the hybrid search's top
	// RerankDepth candidates (default 30) are reordered by a /rerank
	// service at RerankURL (RerankModel, RerankAPIKey) within
	// RerankTimeout (default 2 s); past it the hybrid order stands and the
	// search says the reranker was skipped. TestReranker replaces it.
	Rerank        string
	RerankURL     string
	RerankModel   string
	RerankAPIKey  string
	RerankTimeout time.Duration
	RerankDepth   int
	TestReranker  embed.Reranker

	// Fetch gets web pages through the forgery guard (internal/safehttp);
	// nil: sources from URLs are refused. MinRefresh is the shortest
	// refreshInterval a web source may ask (default 15 min); WebPace the
	// least time between two requests of a crawl to one site (default and
	// floor: web.MinCrawlPace).
	Fetch      web.Fetch
	MinRefresh time.Duration
	WebPace    time.Duration

	// TestEmbedder, when set, replaces the configured embedder (tests and
	// benchmarks inject failing or slow embedders here).
	TestEmbedder embed.Embedder
	// Observe, when set, wraps the embedder the service uses (the server
	// times its calls for metrics).
	Observe func(embed.Embedder) embed.Embedder
}

// NewEmbedder builds the embedder cfg selects. Listings share it, so
// knowledge and listing vectors come from one model.
func NewEmbedder(cfg Config) (embed.Embedder, error) {
	if cfg.TestEmbedder != nil {
		return cfg.TestEmbedder, nil
	}
	switch strings.ToLower(cfg.Embedder) {
	case "", "builtin":
		dims := cfg.EmbedDims
		if dims == 0 {
			dims = embed.DefaultBuiltinDims
		}
		b, err := embed.NewBuiltin(dims)
		if err != nil {
			return nil, fmt.Errorf("--embed-dims: %w", err)
		}
		return b, nil
	case "openai":
		return newOpenAIEmbedder(cfg)
	}
	return nil, fmt.Errorf("--embedder %q: use builtin or openai", cfg.Embedder)
}

// Tuning is emb's search tuning with cfg's overrides.
func (cfg Config) Tuning(emb embed.Embedder) embed.SearchTuning {
	t := embed.TuningOf(emb)
	if cfg.SearchAlpha != 0 {
		t.Alpha = min(1, max(0, cfg.SearchAlpha))
	}
	if cfg.SearchMinSimilarity != 0 {
		t.MinSimilarity = cfg.SearchMinSimilarity
	}
	return t
}

// newOpenAIEmbedder builds the OpenAI-compatible embedder.
func newOpenAIEmbedder(cfg Config) (embed.Embedder, error) {
	o, err := embed.NewOpenAI(embed.OpenAIConfig{
		BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Model: cfg.OpenAIModel,
		Dimensions: cfg.OpenAIDimensions, SendDimensions: cfg.OpenAISendDimensions,
		BatchSize: cfg.EmbedBatch, Timeout: cfg.EmbedTimeout, Concurrency: cfg.EmbedConcurrency, MaxRetries: cfg.EmbedRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("--embedder openai: %w", err)
	}
	return o, nil
}

// newWorker builds the chunker and worker for an embedder.
func newWorker(d Deps, emb embed.Embedder, cfg Config, log *slog.Logger) (*embed.Worker, error) {
	ch, err := embed.NewChunker(embed.DefaultChunkTokens, embed.DefaultOverlap)
	if err != nil {
		return nil, fmt.Errorf("chunker: %w", err)
	}
	poll := cfg.PollInterval
	if poll == 0 {
		poll = 2 * time.Second
	}
	if poll < 0 { // tests: wake-only
		poll = 0
	}
	wc := embed.WorkerConfig{Workers: cfg.Workers, PollInterval: poll, EmbedBatch: cfg.EmbedBatch, Lease: cfg.Lease,
		Retries: cfg.Retries, RetryBackoff: cfg.RetryBackoff, Log: log, Queued: d.Queued}
	return embed.NewWorker(d.KB, emb, ch, wc), nil
}
