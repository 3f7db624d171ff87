package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/internal/wakeup"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/vectorstore"
)

// WorkerConfig tunes the background knowledge worker.
type WorkerConfig struct {
	// Workers is how many batches are processed at once (default 2).
	Workers int
	// PollInterval is how often idle workers look for work queued by other
	// processes (the CLI, another server); writes of this process wake them
	// at once through Wake. Zero means wake-only (tests).
	PollInterval time.Duration
	// Lease is how long a claim on a source lasts without renewal; a
	// crashed process's sources are taken over after it (default 15 s).
	Lease time.Duration
	// EmbedBatch is how many chunk texts go to the embedder per call
	// (default 64); the lease is renewed and shutdown checked between calls.
	EmbedBatch int
	// BatchSources is how many queued sources one claim takes (default 64),
	// and BatchBytes how much content (default 256 KB; a larger source goes
	// alone): their chunks share embedding calls and they are stored in one
	// transaction.
	BatchSources, BatchBytes int
	// Retries is how many times a source that failed because the embedding
	// service was unavailable is tried again on its own (default 5;
	// negative: never); RetryBackoff is the wait before the first retry
	// (default 30 s), doubled for each next one, at most an hour.
	Retries      int
	RetryBackoff time.Duration
	Log          *slog.Logger
	// Queued, when set, wakes idle workers when any process queues a source
	// (storage.Stores.Waker(ChanKB)); the poll is then a safety net.
	Queued wakeup.Waker
}

// maxRetryBackoff caps the wait before an automatic retry.
const maxRetryBackoff = time.Hour

// Worker chunks and embeds queued knowledge sources in the background and
// stores each batch's chunks, full text and vectors in one transaction.
// Claims are leases in the database, so several processes can run workers
// on one file; a newer write of a source during processing wins (the final
// write checks the revision it started from).
type Worker struct {
	kb        *kbstore.Knowledge
	emb       Embedder
	chunker   *Chunker
	cfg       WorkerConfig
	owner     string
	model     vectorstore.VectorModel
	wake      chan struct{}
	nextRetry atomic.Int64 // unix ms of the earliest scheduled retry known; 0: none
}

// NewWorker returns a worker for the knowledge store with the embedder and chunker.
func NewWorker(kb *kbstore.Knowledge, emb Embedder, chunker *Chunker, cfg WorkerConfig) *Worker {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 15 * time.Second
	}
	if cfg.EmbedBatch <= 0 {
		cfg.EmbedBatch = 64
	}
	if cfg.BatchSources <= 0 {
		cfg.BatchSources = 64
	}
	if cfg.BatchBytes <= 0 {
		cfg.BatchBytes = 256 << 10
	}
	if cfg.Retries == 0 {
		cfg.Retries = 5
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Worker{
		kb: kb, emb: emb, chunker: chunker, cfg: cfg,
		owner: uuid.NewString(),
		model: vectorstore.VectorModel{Embedder: emb.Name(), Model: emb.Model(), Dims: emb.Dimensions()},
		wake:  make(chan struct{}, cfg.Workers),
	}
}

// Model is the vector model the worker's embedder produces.
func (w *Worker) Model() vectorstore.VectorModel { return w.model }

// Prepare runs once before Run: sources left processing by a stopped
// process go back to pending, and collections indexed by another embedder
// are reset and queued for re-embedding. It returns how many sources it
// queued.
func (w *Worker) Prepare(ctx context.Context) (int, error) {
	n, err := w.kb.ResetUnfinishedKB(ctx)
	if err != nil {
		return 0, fmt.Errorf("kb worker: resume unfinished: %w", err)
	}
	m, err := w.kb.SyncKBModel(ctx, w.model, "", false)
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
// batch in hand when ctx ends finishes its current embedding call; what is
// done is stored, the rest given back (pending) for the next start.
func (w *Worker) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range w.cfg.Workers {
		wg.Go(func() { w.loop(ctx) })
	}
	wg.Wait()
	return nil
}

func (w *Worker) loop(ctx context.Context) {
	for {
		// Sources queued by any process wake it (on PostgreSQL while the
		// listener is up; the poll is then only a safety net). Taken
		// before the claims read, so a commit in between is not missed.
		// Wake-only workers (tests) hear of nothing but Wake.
		var queued <-chan struct{}
		var tick <-chan time.Time
		var poll *time.Timer
		if w.cfg.PollInterval > 0 {
			queued = wakeup.Next(w.cfg.Queued)
			wait := wakeup.IdlePoll(w.cfg.Queued, w.cfg.PollInterval)
			poll = time.NewTimer(wait)
			tick = poll.C
		}
		for ctx.Err() == nil {
			n, err := w.ProcessBatch(ctx)
			if err != nil && ctx.Err() == nil {
				w.cfg.Log.Error("kb worker", "err", err)
				break
			}
			if n == 0 {
				break
			}
		}
		// Sleep until woken, the poll, or the next retry falls due.
		var retry <-chan time.Time
		var timer *time.Timer
		at := w.nextRetry.Load()
		if at != 0 {
			timer = time.NewTimer(time.Until(time.UnixMilli(at)) + time.Millisecond)
			retry = timer.C
		}
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-queued:
		case <-tick:
		case <-retry:
			w.nextRetry.CompareAndSwap(at, 0) // the claim reads what is still scheduled
		}
		if timer != nil {
			timer.Stop()
		}
		if poll != nil {
			poll.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// noteRetry records that a retry is scheduled at t (the earliest wins).
func (w *Worker) noteRetry(t time.Time) {
	if t.IsZero() {
		return
	}
	at := t.UnixMilli()
	for {
		cur := w.nextRetry.Load()
		if cur != 0 && cur <= at || w.nextRetry.CompareAndSwap(cur, at) {
			return
		}
	}
}

// Drain processes queued sources until none is left (or ctx ends) and
// returns how many it took; used by `agentd reindex`.
func (w *Worker) Drain(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		did, err := w.ProcessBatch(ctx)
		n += did
		if err != nil || did == 0 {
			return n, err
		}
	}
	return n, ctx.Err()
}

// ProcessBatch claims a batch of the oldest queued sources and processes
// it: their chunks share embedding calls, and what was processed is stored
// in one transaction. It returns how many sources it claimed (0: nothing to
// do).
func (w *Worker) ProcessBatch(ctx context.Context) (int, error) {
	jobs, next, err := w.kb.ClaimKBSources(ctx, w.owner, w.cfg.Lease, w.cfg.BatchSources, w.cfg.BatchBytes)
	if err != nil {
		return 0, err
	}
	w.noteRetry(next)
	if len(jobs) == 0 {
		return 0, nil
	}
	// A heartbeat renews the claims while the batch is processed, so a
	// short lease suffices and a crashed process's sources are taken over
	// soon; losing the claims stops this processing.
	pctx, stop := context.WithCancel(ctx)
	beat := make(chan bool, 1)
	go func() { beat <- w.heartbeat(pctx, jobs, stop) }()
	results := w.process(pctx, jobs)
	stop()
	if lostClaim := <-beat; lostClaim {
		w.cfg.Log.Warn("knowledge source claims lost during processing", "sources", len(jobs))
		return len(jobs), nil
	}
	var done []kbstore.KBDone
	var fails []kbstore.KBFailure
	var back []kbstore.KBJob
	for i, r := range results {
		switch {
		case r.err == nil:
			done = append(done, kbstore.KBDone{Job: jobs[i], Chunks: r.chunks})
		case ctx.Err() != nil:
			back = append(back, jobs[i])
		default:
			f := w.failure(jobs[i], r.err)
			w.cfg.Log.Warn("knowledge source failed", "source", jobs[i].SourceID, "err", f.Msg)
			fails = append(fails, f)
		}
	}
	// The final writes must land even when shutdown began after the last
	// embedding call: use a context that outlives ctx, briefly.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if len(done) > 0 {
		n, err := w.kb.CompleteKBSources(wctx, w.owner, w.model, done)
		switch {
		case errors.Is(err, sqldb.ErrConflict): // the collection changed model meanwhile
			w.cfg.Log.Debug("knowledge sources overtaken during processing", "err", err)
		case err != nil:
			return len(jobs), err
		case n < len(done):
			w.cfg.Log.Debug("knowledge sources overtaken during processing", "sources", len(done)-n)
		}
	}
	if len(fails) > 0 {
		if _, err := w.kb.FailKBSources(wctx, w.owner, fails); err != nil {
			return len(jobs), err
		}
		for _, f := range fails {
			w.noteRetry(f.RetryAt)
		}
	}
	return len(jobs), w.kb.ReleaseKBSources(wctx, back, w.owner)
}

// retryLayout is the API's timestamp format (RFC 3339, UTC, milliseconds).
const retryLayout = "2006-01-02T15:04:05.000Z07:00"

// failure is what a failed job records: an embedding service that was
// unavailable schedules a retry with backoff while retries remain, and the
// error says so ("embedding service unavailable: <cause>; retry 2 of 5 at
// <time>"); any other failure is final.
func (w *Worker) failure(j kbstore.KBJob, err error) kbstore.KBFailure {
	f := kbstore.KBFailure{Job: j, Msg: err.Error(), Retries: j.Retries}
	if !errors.Is(err, ErrUnavailable) {
		return f
	}
	cause := strings.TrimPrefix(strings.TrimPrefix(f.Msg, "embedding failed: "), ErrEmbedder.Error()+": ")
	if j.Retries >= w.cfg.Retries {
		f.Msg = fmt.Sprintf("%v: %s; gave up after %d retries", ErrUnavailable, cause, j.Retries)
		return f
	}
	f.Retries = j.Retries + 1
	d := min(w.cfg.RetryBackoff<<min(j.Retries, 20), maxRetryBackoff)
	f.RetryAt = time.Now().Add(d).UTC().Truncate(time.Millisecond)
	f.Msg = fmt.Sprintf("%v: %s; retry %d of %d at %s", ErrUnavailable, cause, f.Retries, w.cfg.Retries, f.RetryAt.Format(retryLayout))
	return f
}

// result is one job's outcome: its chunks with vectors, or why it failed.
type result struct {
	chunks []kbstore.KBChunk
	err    error
}

// process chunks and embeds a batch of jobs; each error is what that
// source's error field will say. The texts of all jobs go to the embedder
// together; when a call fails for a reason other than the service being
// unavailable, its jobs are embedded one by one so that one bad source does
// not fail the others.
func (w *Worker) process(ctx context.Context, jobs []kbstore.KBJob) []result {
	res := make([]result, len(jobs))
	var texts []string
	var at []textRef
	for i, j := range jobs {
		chunks, ts, err := w.chunk(j)
		res[i] = result{chunks: chunks, err: err}
		for c, t := range ts {
			texts = append(texts, t)
			at = append(at, textRef{i, c})
		}
	}
	for s := 0; s < len(texts); s += w.cfg.EmbedBatch {
		if ctx.Err() != nil {
			failPending(res, ctx.Err())
			break
		}
		e := min(len(texts), s+w.cfg.EmbedBatch)
		refs, batch := pendingTexts(res, at[s:e], texts[s:e])
		if len(batch) == 0 {
			continue
		}
		err := w.embedInto(ctx, res, refs, batch)
		switch {
		case err == nil:
		case errors.Is(err, ErrUnavailable):
			failPending(res, err) // the service is down: nothing else will embed now
			return res
		default:
			for _, job := range jobsOf(refs) {
				var jr []textRef
				var jt []string
				for k, r := range refs {
					if r.job == job {
						jr, jt = append(jr, r), append(jt, batch[k])
					}
				}
				if len(jr) == len(refs) { // only this job in the call
					res[job].err = err
				} else if err := w.embedInto(ctx, res, jr, jt); err != nil {
					res[job].err = err
				}
			}
		}
	}
	return res
}

// textRef places an embedded text: the job and its chunk.
type textRef struct{ job, chunk int }

// chunk cuts one job into chunks and their embedding texts; a panic of the
// chunker fails the job only.
func (w *Worker) chunk(j kbstore.KBJob) (out []kbstore.KBChunk, texts []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, texts, err = nil, nil, fmt.Errorf("processing failed: %v", r)
		}
	}()
	chunks := w.chunker.Chunk(j.Content)
	out = make([]kbstore.KBChunk, len(chunks))
	texts = make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = EmbedText(j.Title, c)
		out[i] = kbstore.KBChunk{Index: c.Index, Content: c.Text, HeadingPath: c.HeadingPath, Tokens: c.Tokens, Body: texts[i]}
	}
	return out, texts, nil
}

// embedInto embeds texts in one call (which finishes even when shutdown
// starts meanwhile) and stores each vector at its ref.
func (w *Worker) embedInto(ctx context.Context, res []result, refs []textRef, texts []string) error {
	vecs, err := w.emb.Embed(context.WithoutCancel(ctx), texts)
	if err != nil {
		return fmt.Errorf("embedding failed: %w", err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("embedding failed: %d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if err := checkVector(v, w.model.Dims); err != nil {
			return fmt.Errorf("embedding failed: %w", err)
		}
		r := refs[i]
		res[r.job].chunks[r.chunk].Vec = v
	}
	return nil
}

// pendingTexts keeps the texts of jobs that have not failed.
func pendingTexts(res []result, refs []textRef, texts []string) ([]textRef, []string) {
	var r []textRef
	var t []string
	for i, ref := range refs {
		if res[ref.job].err == nil {
			r, t = append(r, ref), append(t, texts[i])
		}
	}
	return r, t
}

// failPending fails every job not failed yet whose vectors are not all in.
func failPending(res []result, err error) {
	for i := range res {
		if res[i].err != nil {
			continue
		}
		for _, c := range res[i].chunks {
			if c.Vec == nil {
				res[i].err = err
				break
			}
		}
	}
}

// jobsOf lists the distinct jobs of refs, in order.
func jobsOf(refs []textRef) []int {
	var out []int
	for i, r := range refs {
		if i == 0 || r.job != refs[i-1].job {
			out = append(out, r.job)
		}
	}
	return out
}

// heartbeat renews the jobs' claims every third of the lease until ctx
// ends. When they cannot be renewed (database gone) it stops the
// processing and reports true.
func (w *Worker) heartbeat(ctx context.Context, jobs []kbstore.KBJob, stop context.CancelFunc) bool {
	t := time.NewTicker(max(w.cfg.Lease/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if err := w.kb.RenewKBLeases(ctx, jobs, w.owner, w.cfg.Lease); err != nil {
				if ctx.Err() != nil {
					return false
				}
				w.cfg.Log.Warn("renewing knowledge source claims", "sources", len(jobs), "err", err)
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
