package kb

import (
	"context"
	"log/slog"
)

// ReindexOptions says what Reindex queues and reports.
type ReindexOptions struct {
	// CollectionID limits it to one collection ("": all).
	CollectionID string
	// Force queues every source even when the embedder is unchanged.
	Force bool
	// Failed queues every failed source again, its automatic retries
	// counted from zero (`agentd reindex --failed`).
	Failed bool
	Log    *slog.Logger
	// Progress, when set, is called after each batch with (done, backlog).
	Progress func(done, backlog int)
}

// Reindex brings the knowledge index in line with the service's embedder,
// in this process: collections indexed by another embedder lose their
// vectors and their sources are queued (with Force every source, with
// Failed every failed source of the matched collections is queued too),
// then every queued source is chunked and embedded before it returns. It
// works beside a running server: claims are leases in the database. A
// source that fails again because the embedding service is still
// unavailable keeps its scheduled retry, which a running server makes.
func (s *Service) Reindex(ctx context.Context, opt ReindexOptions) (queued, done int, err error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	w, err := newWorker(s.db, s.emb, s.cfg, opt.Log)
	if err != nil {
		return 0, 0, err
	}
	if _, err := s.db.KB.ResetUnfinishedKB(ctx); err != nil {
		return 0, 0, err
	}
	if queued, err = s.db.KB.SyncKBModel(ctx, w.Model(), opt.CollectionID, opt.Force); err != nil {
		return 0, 0, err
	}
	if opt.Failed { // after the sync, which may have queued some already
		n, err := s.db.KB.RequeueFailedKB(ctx, opt.CollectionID)
		if err != nil {
			return queued, 0, err
		}
		queued += n
	}
	for ctx.Err() == nil {
		did, err := w.ProcessBatch(ctx)
		if err != nil {
			return queued, done, err
		}
		if did == 0 {
			break
		}
		done += did
		if opt.Progress != nil {
			n, _ := s.db.KB.KBBacklog(ctx, "")
			opt.Progress(done, n)
		}
	}
	return queued, done, ctx.Err()
}
