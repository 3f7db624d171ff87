package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/storage"
)

// WorkerConfig tunes the background knowledge worker.
type WorkerConfig struct {
	// Workers is how many sources are processed at once (default 2).
	Workers int
	// PollInterval is how often idle workers look for work queued by other
	// processes (the CLI, another server); writes of this process wake them
	// at once through Wake. Zero means wake-only (tests).
	PollInterval time.Duration
	// Lease is how long a claim on a source lasts without renewal; a
	// crashed process's sources are taken over after it (default 2 min).
	Lease time.Duration
	// EmbedBatch is how many chunk texts go to the embedder per call
	// (default 64); the lease is renewed and shutdown checked between calls.
	EmbedBatch int
	Log        *slog.Logger
}

// Worker chunks and embeds queued knowledge sources in the background and
// stores each one's chunks, full text and vectors in one transaction.
// Claims are leases in the database, so several processes can run workers
// on one file; a newer write of a source during processing wins (the final
// write checks the revision it started from).
type Worker struct {
	db      *storage.DB
	emb     Embedder
	chunker *Chunker
	cfg     WorkerConfig
	owner   string
	model   storage.VectorModel
	wake    chan struct{}
}

// NewWorker returns a worker for db with the embedder and chunker.
func NewWorker(db *storage.DB, emb Embedder, chunker *Chunker, cfg WorkerConfig) *Worker {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 15 * time.Second
	}
	if cfg.EmbedBatch <= 0 {
		cfg.EmbedBatch = 64
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Worker{
		db: db, emb: emb, chunker: chunker, cfg: cfg,
		owner: uuid.NewString(),
		model: storage.VectorModel{Embedder: emb.Name(), Model: emb.Model(), Dims: emb.Dimensions()},
		wake:  make(chan struct{}, cfg.Workers),
	}
}

// Model is the vector model the worker's embedder produces.
func (w *Worker) Model() storage.VectorModel { return w.model }

// Prepare runs once before Run: sources left processing by a stopped
// process go back to pending, and collections indexed by another embedder
// are reset and queued for re-embedding. It returns how many sources it
// queued.
func (w *Worker) Prepare(ctx context.Context) (int, error) {
	n, err := w.db.ResetUnfinishedKB(ctx)
	if err != nil {
		return 0, fmt.Errorf("kb worker: resume unfinished: %w", err)
	}
	m, err := w.db.SyncKBModel(ctx, w.model, "", false)
	if err != nil {
		return 0, fmt.Errorf("kb worker: check embedder: %w", err)
	}
	if n+m > 0 {
		w.cfg.Log.Info("knowledge sources queued", "unfinished", n, "reindex", m, "embedder", w.model.String())
	}
	return n + m, nil
}

// Wake tells idle workers that new work was queued.
func (w *Worker) Wake() {
	for range cap(w.wake) {
		select {
		case w.wake <- struct{}{}:
		default:
			return
		}
	}
}

// Run processes sources with cfg.Workers goroutines until ctx ends. A
// source in hand when ctx ends finishes its current embedding call and is
// given back (pending) for the next start.
func (w *Worker) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range w.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx)
		}()
	}
	wg.Wait()
	return nil
}

func (w *Worker) loop(ctx context.Context) {
	var tick <-chan time.Time
	if w.cfg.PollInterval > 0 {
		t := time.NewTicker(w.cfg.PollInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		for ctx.Err() == nil {
			did, err := w.ProcessOne(ctx)
			if err != nil && ctx.Err() == nil {
				w.cfg.Log.Error("kb worker", "err", err)
				break
			}
			if !did {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-tick:
		}
	}
}

// Drain processes queued sources until none is left (or ctx ends) and
// returns how many it took; used by `agentd reindex`.
func (w *Worker) Drain(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		did, err := w.ProcessOne(ctx)
		if err != nil {
			return n, err
		}
		if !did {
			return n, nil
		}
		n++
	}
	return n, ctx.Err()
}

// ProcessOne claims and processes the oldest queued source; false means
// there was nothing to do.
func (w *Worker) ProcessOne(ctx context.Context) (bool, error) {
	job, err := w.db.ClaimKBSource(ctx, w.owner, w.cfg.Lease)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// A heartbeat renews the claim while the source is processed, so a
	// short lease suffices and a crashed process's source is taken over
	// soon; losing the claim stops this processing.
	pctx, stop := context.WithCancel(ctx)
	beat := make(chan bool, 1)
	go func() { beat <- w.heartbeat(pctx, job, stop) }()
	chunks, perr := w.process(pctx, job)
	stop()
	if lostClaim := <-beat; lostClaim {
		w.cfg.Log.Warn("knowledge source claim lost during processing", "source", job.SourceID)
		return true, nil
	}
	// The final write must land even when shutdown began after the last
	// embedding call: use a context that outlives ctx, briefly.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	switch {
	case perr == nil:
		err = w.db.CompleteKBSource(wctx, job, w.owner, w.model, chunks)
	case ctx.Err() != nil:
		return true, w.db.ReleaseKBSource(wctx, job, w.owner)
	default:
		w.cfg.Log.Warn("knowledge source failed", "source", job.SourceID, "err", perr)
		err = w.db.FailKBSource(wctx, job, w.owner, perr.Error())
	}
	if errors.Is(err, storage.ErrConflict) {
		w.cfg.Log.Debug("knowledge source overtaken during processing", "source", job.SourceID, "err", err)
		return true, nil
	}
	return true, err
}

// process chunks and embeds one source; its error is what the source's
// error field will say.
func (w *Worker) process(ctx context.Context, job storage.KBJob) (out []storage.KBChunk, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("processing failed: %v", r)
		}
	}()
	chunks := w.chunker.Chunk(job.Content)
	out = make([]storage.KBChunk, len(chunks))
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = EmbedText(job.Title, c)
		out[i] = storage.KBChunk{Index: c.Index, Content: c.Text, HeadingPath: c.HeadingPath, Tokens: c.Tokens, Body: texts[i]}
	}
	for s := 0; s < len(texts); s += w.cfg.EmbedBatch {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := min(len(texts), s+w.cfg.EmbedBatch)
		// The call in hand finishes even when shutdown starts meanwhile.
		vecs, err := w.emb.Embed(context.WithoutCancel(ctx), texts[s:e])
		if err != nil {
			return nil, fmt.Errorf("embedding failed: %w", err)
		}
		if len(vecs) != e-s {
			return nil, fmt.Errorf("embedding failed: %d vectors for %d texts", len(vecs), e-s)
		}
		for i, v := range vecs {
			if err := checkVector(v, w.model.Dims); err != nil {
				return nil, fmt.Errorf("embedding failed: %w", err)
			}
			out[s+i].Vec = v
		}
	}
	return out, nil
}

// heartbeat renews job's claim every third of the lease until ctx ends.
// When the claim cannot be renewed (taken over, database gone) it stops the
// processing and reports true.
func (w *Worker) heartbeat(ctx context.Context, job storage.KBJob, stop context.CancelFunc) bool {
	t := time.NewTicker(max(w.cfg.Lease/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if err := w.db.RenewKBLease(ctx, job, w.owner, w.cfg.Lease); err != nil {
				if ctx.Err() != nil {
					return false
				}
				w.cfg.Log.Warn("renewing knowledge source claim", "source", job.SourceID, "err", err)
				stop()
				return true
			}
		}
	}
}

// checkVector refuses vectors a search could not use.
func checkVector(v []float32, dims int) error {
	if len(v) != dims {
		return fmt.Errorf("vector of %d dimensions, want %d", len(v), dims)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("vector holds NaN or Inf")
		}
	}
	return nil
}
