package features

import (
	"context"
	"time"

	"github.com/agentd/agentd/storage/orgstore"
)

// pruneWidgetRates deletes, every minute, the widget's rate buckets that no
// window counts any longer (PostgreSQL, where its limits are shared): a
// visitor's key is leased for one conversation and never again, so only
// this removes its last buckets.
func (s *Set) pruneWidgetRates(ctx context.Context) error {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for {
			n, err := s.Stores.Orgs.PruneRates(ctx, "widget:", time.Minute, time.Now())
			if err != nil && ctx.Err() == nil {
				s.log.Warn("pruning the widget's rate buckets", "err", err)
			}
			if err != nil || n < orgstore.PruneBatch {
				break
			}
		}
	}
}
