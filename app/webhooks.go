package app

import (
	"context"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/safehttp"
)

// webhooksState is what the webhook and event handlers share.
type webhooksState struct {
	svc     *events.Service
	worker  *events.Worker
	stream  events.StreamConfig
	streams context.Context     // ends when the server stops, closing event streams
	guard   *events.StreamGuard // open streams per key, re-checked while open
}

// wireWebhooks installs the event views on the database, builds the
// webhook service and starts the delivery worker.
func (a *App) wireWebhooks(ctx context.Context) error {
	cfg := a.cfg.Webhooks
	if !a.db.Sealing() {
		a.log.Warn("webhook signing secrets are stored in plain text: set AGENTD_SECRET_KEY (base64 of 32 bytes) to encrypt them")
	}
	events.Install(a.db, events.FeatureViews())
	client := safehttp.New(safehttp.Options{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver, MaxBody: events.MaxResponse})
	streams, stop := context.WithCancel(context.Background())
	a.srv.webhooks = webhooksState{
		svc:     &events.Service{DB: a.db, Guard: client},
		stream:  events.StreamConfig{Poll: cfg.Poll, KeepAlive: cfg.KeepAlive},
		streams: streams,
		guard:   events.NewStreamGuard(cfg.Recheck),
	}
	a.goWorker(func(ctx context.Context) error { <-ctx.Done(); stop(); return nil })
	a.onClose(func() error { stop(); return nil })
	if cfg.Disabled {
		return nil
	}
	w := events.NewWorker(events.WorkerConfig{DB: a.db, Sender: client, Log: a.log, Concurrency: cfg.Concurrency,
		Timeout: cfg.Timeout, Lease: cfg.Lease, Poll: cfg.Poll, Schedule: cfg.Schedule, DisableAfter: cfg.DisableAfter})
	a.srv.webhooks.worker = w
	a.goWorker(w.Run)
	return nil
}
