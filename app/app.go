package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentd/agentd/app/api"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/metrics"
)

// App is a running agentd: database, HTTP server and background workers.
type App struct {
	cfg Config
	log *slog.Logger
	srv *api.Server
	// features is the database's stores and every feature, opened once
	// and complete (app/features); the API and the dashboard are built
	// from them.
	features *features.Set
	ln       net.Listener
	workers  []func(context.Context) error
	closers  []func() error

	metricsLn net.Listener // --metrics-addr, nil when off (app/metrics.go)
}

// Open checks every setting (Config.Validate) before anything else, so a
// start that fails on configuration creates no database and prints no key;
// then listens on cfg.Addr (and --metrics-addr: a busy port fails here, at
// once), opens the database and every feature (features.Open), and builds
// the API and the dashboard from them (api.New). The first organization
// is created last, on an empty database, and its owner key printed once to
// cfg.Out (app/firstrun.go).
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	a := &App{cfg: cfg, log: cfg.Log, ln: ln}
	mln, err := listenMetrics(cfg.MetricsAddr)
	if err != nil {
		ln.Close()
		return nil, err
	}
	var reg *metrics.Registry
	if mln != nil {
		reg = metrics.New()
		a.serveMetrics(mln, reg)
	}
	f, err := features.Open(ctx, cfg.features(reg))
	if err != nil {
		a.Close()
		return nil, err
	}
	a.features = f
	if !f.Stores.Webhooks.Sealing() {
		a.log.Warn("webhook signing secrets are stored in plain text: set AGENTD_SECRET_KEY (base64 of 32 bytes) to encrypt them")
	}
	if !cfg.STT.Enabled() || !cfg.TTS.Enabled() {
		a.log.Info("voice agents stay silent on calls until both --stt and --tts are set")
	}
	a.workers = append(a.workers, f.Workers()...)
	a.srv = api.New(cfg.api(reg), apiDeps(f))
	a.onClose(func() error { a.srv.Shutdown(); return nil })
	if err := a.firstRun(ctx); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// apiDeps are the opened features and stores the API is built from.
func apiDeps(f *features.Set) api.Deps {
	return api.Deps{Dashboard: f.Dashboard, Access: f.Access, Agents: f.Agents, DNC: f.DNC, Settings: f.Settings, Calls: f.Calls, KB: f.KB,
		Listings: f.Listings, Events: f.Events, Deliveries: f.Deliveries, Conversations: f.Conversations, Widget: f.Widget,
		Analysis: f.Analysis, AgentTests: f.AgentTests, Recordings: f.Recordings, WebCalls: f.WebCalls,
		Stores: api.Stores{Epoch: f.Stores, Orgs: f.Stores.Orgs, Calls: f.Stores.Calls, Agents: f.Stores.Agents,
			Shared: f.Stores.Postgres()}}
}

// Addr is the address the server listens on (useful with port 0).
func (a *App) Addr() string { return a.ln.Addr().String() }

// Features is the app's stores and features, for tests and in-process tools.
func (a *App) Features() *features.Set { return a.features }

// goWorker adds a background worker that Run starts and stops with the server.
func (a *App) goWorker(fn func(context.Context) error) { a.workers = append(a.workers, fn) }

// onClose adds a cleanup that Close runs (in reverse order) before closing
// the features and the database.
func (a *App) onClose(fn func() error) { a.closers = append(a.closers, fn) }

// Run serves until ctx ends or a worker fails, then stops the HTTP server
// and the workers within the shutdown budget.
func (a *App) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.srv.Serve(gctx, a.ln, a.cfg.ShutdownTimeout) })
	for _, w := range a.workers {
		g.Go(func() error { return w(gctx) })
	}
	a.log.Info("listening", "addr", a.Addr())
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// Close releases everything Open acquired.
func (a *App) Close() error {
	var errs []error
	if a.ln != nil {
		a.ln.Close()
	}
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	if a.features != nil {
		errs = append(errs, a.features.Close()) // the features, then the database
	}
	return errors.Join(errs...)
}
