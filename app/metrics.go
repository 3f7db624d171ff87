package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/agentd/agentd/internal/metrics"
)

// listenMetrics opens the --metrics-addr listener, in Open before the
// database, so that a busy port fails the start at once.
func listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	return ln, nil
}

// serveMetrics serves the registry's /metrics on its own listener (kept
// off the API port so that it can stay private). The registry is handed to
// features.Open (dial queues, embedder, stores) and api.New (requests by
// route); without the flag nothing is collected and requests pay one nil
// check.
func (a *App) serveMetrics(ln net.Listener, reg *metrics.Registry) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	a.onClose(func() error { ln.Close(); return nil })
	a.goWorker(func(ctx context.Context) error {
		stop := context.AfterFunc(ctx, func() { srv.Close() })
		defer stop()
		a.log.Info("metrics listening", "addr", ln.Addr().String())
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) && ctx.Err() == nil {
			return fmt.Errorf("metrics server: %w", err)
		}
		return nil
	})
	a.metricsLn = ln
}

// MetricsAddr is the address /metrics is served on ("" when off).
func (a *App) MetricsAddr() string {
	if a.metricsLn == nil {
		return ""
	}
	return a.metricsLn.Addr().String()
}
