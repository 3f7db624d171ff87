package app

import (
	"context"
	"time"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/safehttp"
)

// WebhooksConfig configures event delivery (app/events).
type WebhooksConfig struct {
	// AllowPrivate lets receivers live on loopback, private and link-local
	// addresses (--webhook-allow-private): on-premises receivers and tests.
	AllowPrivate bool
	Timeout      time.Duration   // per request; default 10 s
	Lease        time.Duration   // delivery claim lease; default Timeout + 20 s
	Poll         time.Duration   // look for other processes' events; default 1 s
	Concurrency  int             // requests in flight; default 64
	Schedule     []time.Duration // retry delays; default events.Backoff
	KeepAlive    time.Duration   // event stream keep-alive; default 15 s
	DisableAfter time.Duration   // an endpoint failing everything this long is disabled; default 24 h
	// Resolver, when set, resolves receiver hosts (tests).
	Resolver safehttp.Resolver
	// Disabled turns the delivery worker off (benchmarks of the write path).
	Disabled bool
}

// webhooksState is what the webhook and event handlers share.
type webhooksState struct {
	svc     *events.Service
	worker  *events.Worker
	stream  events.StreamConfig
	streams context.Context // ends when the server stops, closing event streams
}

// wireWebhooks installs the event views on the database, builds the
// webhook service and starts the delivery worker.
func (a *App) wireWebhooks(ctx context.Context) error {
	cfg := a.cfg.Webhooks
	events.Install(a.db, events.FeatureViews())
	client := safehttp.New(safehttp.Options{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver, MaxBody: events.MaxResponse})
	streams, stop := context.WithCancel(context.Background())
	a.srv.webhooks = webhooksState{
		svc:     &events.Service{DB: a.db, Guard: client},
		stream:  events.StreamConfig{Poll: cfg.Poll, KeepAlive: cfg.KeepAlive},
		streams: streams,
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
