package kb

import (
	"context"
	"log/slog"

	"github.com/agentd/agentd/storage"
)

// Reindex brings the knowledge index in line with the embedder cfg selects,
// in this process: collections indexed by another embedder lose their
// vectors and their sources are queued (with force, every source of the
// matched collections is queued), then every queued source is chunked and
// embedded before it returns. It works beside a running server: claims are
// leases in the database. collectionID "" means all collections. progress,
// when set, is called after each source with (done, backlog).
func Reindex(ctx context.Context, db *storage.DB, cfg Config, collectionID string, force bool, log *slog.Logger,
	progress func(done, backlog int)) (queued, done int, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	emb, err := NewEmbedder(cfg)
	if err != nil {
		return 0, 0, err
	}
	w, err := newWorker(db, emb, cfg, log)
	if err != nil {
		return 0, 0, err
	}
	if _, err := db.ResetUnfinishedKB(ctx); err != nil {
		return 0, 0, err
	}
	queued, err = db.SyncKBModel(ctx, w.Model(), collectionID, force)
	if err != nil {
		return 0, 0, err
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
		if progress != nil {
			n, _ := db.KBBacklog(ctx, "")
			progress(done, n)
		}
	}
	return queued, done, ctx.Err()
}
