package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/recordings"
)

// App is a running agentd: database, HTTP server and background workers.
type App struct {
	cfg Config
	log *slog.Logger
	srv *Server
	// features is the database's stores and every feature, built once
	// (app/features); the handlers and the dashboard call them.
	features *features.Set
	ln       net.Listener
	http     *http.Server
	workers  []func(context.Context) error
	closers  []func() error

	metricsLn net.Listener // --metrics-addr, nil when off (app/metrics.go)
}

// Open checks every setting (Config.Validate) before anything else, so a
// start that fails on configuration creates no database and prints no key;
// then listens on cfg.Addr (and --metrics-addr: a busy port fails here, at
// once), opens the database (applying migrations) and wires every feature.
// The first organization is created last, on an empty database, and its
// owner key printed once to cfg.Out (app/firstrun.go).
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
	mln, err := listenMetrics(cfg.MetricsAddr)
	if err != nil {
		ln.Close()
		return nil, err
	}
	f, err := features.OpenStores(ctx, cfg.DBPath)
	if err != nil {
		ln.Close()
		if mln != nil {
			mln.Close()
		}
		return nil, err
	}
	a := &App{cfg: cfg, log: cfg.Log, features: f, ln: ln}
	a.srv = newServer(cfg, f, cfg.Log)
	if err := a.wireMetrics(mln); err != nil {
		a.Close()
		return nil, err
	}
	for _, wire := range []func(context.Context) error{a.wireFeatures, a.wireWeb, a.firstRun} {
		if err := wire(ctx); err != nil {
			a.Close()
			return nil, err
		}
	}
	a.http = &http.Server{
		Handler:           a.srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       readTimeout(cfg),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
	}
	return a, nil
}

// wireFeatures builds every feature once over the stores (app/features) and hands the
// server its services and the run loop their workers.
func (a *App) wireFeatures(ctx context.Context) error {
	cfg := features.Config{Workers: true, Calls: a.cfg.Calls, KB: a.cfg.KB, Webhooks: a.cfg.Webhooks, LLM: a.cfg.LLM, Widget: a.cfg.Widget, Log: a.log,
		STT: a.cfg.STT, TTS: a.cfg.TTS, Recordings: a.cfg.Recordings,
		Analysis: analysis.Config{Poll: a.cfg.AnalysisPoll, RetryBase: a.cfg.AnalysisRetry}}
	cfg.Calls.Observe = a.queueObserver
	cfg.KB.Observe = a.timedEmbedder
	if a.srv.metrics != nil {
		cfg.VoiceMetrics = a.srv.metrics.reg.Voice()
	}
	if cfg.Recordings.Dir == "" {
		cfg.Recordings.Dir = recordings.DefaultDir(a.cfg.DBPath)
	}
	f := a.features
	if !f.Stores.Webhooks.Sealing() {
		a.log.Warn("webhook signing secrets are stored in plain text: set AGENTD_SECRET_KEY (base64 of 32 bytes) to encrypt them")
	}
	if !a.cfg.STT.Enabled() || !a.cfg.TTS.Enabled() {
		a.log.Info("voice agents stay silent on calls until both --stt and --tts are set")
	}
	if err := f.Build(ctx, cfg); err != nil {
		return err
	}
	for _, w := range f.Workers() {
		a.goWorker(w)
	}
	streams, stop := context.WithCancel(context.Background())
	a.srv.webhooks = webhooksState{svc: f.Events, worker: f.Deliveries, streams: streams,
		stream: events.StreamConfig{Poll: a.cfg.Webhooks.Poll, KeepAlive: a.cfg.Webhooks.KeepAlive},
		guard:  events.NewStreamGuard(a.cfg.Webhooks.Recheck)}
	a.goWorker(func(ctx context.Context) error { <-ctx.Done(); stop(); return nil })
	a.onClose(func() error { stop(); return nil })
	a.srv.kb, a.srv.listings, a.srv.calls = f.KB, f.Listings, callsState{f.Calls}
	a.srv.agentsAPI.Use(f.Agents)
	a.srv.kbAPI.Use(f.KB)
	a.srv.listingsAPI.Use(f.Listings)
	a.srv.agents, a.srv.dnc, a.srv.settings = f.Agents, f.DNC, f.Settings
	a.srv.conv.Use(f.Conversations)
	a.srv.widget.Use(f.Widget)
	a.srv.analysis.Use(f.Analysis)
	a.srv.analysis.UseTests(f.AgentTests)
	return nil
}

// Addr is the address the server listens on (useful with port 0).
func (a *App) Addr() string { return a.ln.Addr().String() }

// Features is the app's stores and features, for tests and in-process tools.
func (a *App) Features() *features.Set { return a.features }

// Handler is the HTTP handler, for tests that drive it through httptest.
func (a *App) Handler() http.Handler { return a.srv }

// goWorker adds a background worker that Run starts and stops with the server.
func (a *App) goWorker(fn func(context.Context) error) { a.workers = append(a.workers, fn) }

// onClose adds a cleanup that Close runs (in reverse order) before closing
// the features and the database.
func (a *App) onClose(fn func() error) { a.closers = append(a.closers, fn) }

// Run serves until ctx ends or a worker fails, then stops the HTTP server
// and the workers within the shutdown budget.
func (a *App) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := a.http.Serve(a.ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	for _, w := range a.workers {
		g.Go(func() error { return w(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
		defer cancel()
		a.log.Info("shutting down")
		return a.http.Shutdown(sctx)
	})
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
	errs = append(errs, a.features.Close()) // the features, then the database
	return errors.Join(errs...)
}
