package kb

import (
	"context"
	"log/slog"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/wakeup"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/vectorstore"
)

// Deps are the stores the knowledge base uses.
type Deps struct {
	KB      *kbstore.Knowledge
	Vectors *vectorstore.Vectors // the change log the in-memory indexes follow
	Queued  wakeup.Waker         // sources queued by any process (nil: the poll finds them)
}

// Service is the knowledge base of a running server: the embedder, the
// background worker that chunks and embeds sources, and the in-memory
// indexes searches read. One per process; safe for concurrent use.
type Service struct {
	db     Deps
	cfg    Config
	log    *slog.Logger
	emb    embed.Embedder
	worker *embed.Worker
	index  *search.VectorIndex
	text   *search.TextIndex
	tuning embed.SearchTuning
	web    chan struct{}  // wakes the web worker (RunWeb)
	rerank embed.Reranker // nil: none
}

// Open is New and Prepare: the knowledge base of a server process.
func Open(ctx context.Context, db Deps, cfg Config, log *slog.Logger) (*Service, error) {
	s, err := New(db, cfg, log)
	if err != nil {
		return nil, err
	}
	if err := s.Prepare(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// New sets up the embedder cfg selects and the background worker, and
// touches no queue: a CLI command uses the knowledge base beside a running
// server.
func New(db Deps, cfg Config, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	emb, err := NewEmbedder(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Observe != nil {
		emb = cfg.Observe(emb)
	}
	rr, err := NewReranker(cfg)
	if err != nil {
		return nil, err
	}
	w, err := newWorker(db, emb, cfg, log)
	if err != nil {
		return nil, err
	}
	return &Service{db: db, cfg: cfg, log: log, emb: emb, worker: w, tuning: cfg.Tuning(emb), web: make(chan struct{}, 1), rerank: rr,
		index: search.NewVectorIndex(db.Vectors), text: search.NewTextIndex(db.Vectors, db.KB.LoadText)}, nil
}

// Prepare queues again the sources a previous run left unfinished and the
// collections indexed by another embedder, so the server takes requests on
// a consistent queue; the process that runs Run calls it first.
func (s *Service) Prepare(ctx context.Context) error {
	_, err := s.worker.Prepare(ctx)
	return err
}

// Run processes queued sources until ctx ends; a source cut by the end is
// given back for the next start.
func (s *Service) Run(ctx context.Context) error { return s.worker.Run(ctx) }

// Warm loads the in-memory indexes now rather than on the first search. A
// failure is only logged: searches load what they need themselves.
func (s *Service) Warm(ctx context.Context) error {
	if err := s.index.Warm(ctx, "kb:"); err != nil && ctx.Err() == nil {
		s.log.Warn("loading knowledge vectors", "err", err)
	}
	if err := s.text.Warm(ctx, "kb:"); err != nil && ctx.Err() == nil {
		s.log.Warn("loading knowledge text index", "err", err)
	}
	return nil
}

// Embedder is the configured embedder; listings embed with it too, so one
// model serves the whole process.
func (s *Service) Embedder() embed.Embedder { return s.emb }

// SearchTuning is how far hybrid search trusts the embedder (its own
// tuning, or the configured override); listings search with it too.
func (s *Service) SearchTuning() embed.SearchTuning { return s.tuning }

// VectorIndex is the in-memory vector index, shared with listings so the
// process holds one.
func (s *Service) VectorIndex() *search.VectorIndex { return s.index }

// The knowledge store's records, named here so callers above the features
// (the dashboard) need no storage package.
type (
	Collection = kbstore.Collection
	Source     = kbstore.Source
)
