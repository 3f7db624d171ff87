package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/storage"
)

// KBConfig configures knowledge processing (embedder, worker).
type KBConfig struct {
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
	PollInterval time.Duration

	// TestEmbedder, when set, replaces the configured embedder (tests and
	// benchmarks inject failing or slow embedders here).
	TestEmbedder embed.Embedder
}

// kbState is what the knowledge-base handlers share.
type kbState struct {
	emb    embed.Embedder
	worker *embed.Worker
	index  *storage.VectorIndex
	text   *storage.TextIndex
}

// wireKB sets up the embedder and the background knowledge worker: sources
// left unfinished by a previous run and collections indexed by another
// embedder are queued again before the server takes requests.
func (a *App) wireKB(ctx context.Context) error {
	emb, err := newEmbedder(a.cfg.KB)
	if err != nil {
		return err
	}
	emb = a.timedEmbedder(emb)
	w, err := newKBWorker(a.db, emb, a.cfg.KB, a.log)
	if err != nil {
		return err
	}
	if _, err := w.Prepare(ctx); err != nil {
		return err
	}
	idx, text := storage.NewVectorIndex(a.db), storage.NewKBTextIndex(a.db)
	a.srv.kb = kbState{emb: emb, worker: w, index: idx, text: text}
	a.goWorker(w.Run)
	a.goWorker(func(ctx context.Context) error {
		// Load the in-memory indexes now rather than on the first search.
		if err := idx.Warm(ctx, "kb:"); err != nil && ctx.Err() == nil {
			a.log.Warn("loading knowledge vectors", "err", err)
		}
		if err := text.Warm(ctx, "kb:"); err != nil && ctx.Err() == nil {
			a.log.Warn("loading knowledge text index", "err", err)
		}
		return nil
	})
	return nil
}

// newKBWorker builds the chunker and worker for an embedder.
func newKBWorker(db *storage.DB, emb embed.Embedder, cfg KBConfig, log *slog.Logger) (*embed.Worker, error) {
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
	wc := embed.WorkerConfig{Workers: cfg.Workers, PollInterval: poll, EmbedBatch: cfg.EmbedBatch, Lease: cfg.Lease, Log: log}
	return embed.NewWorker(db, emb, ch, wc), nil
}
