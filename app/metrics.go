package app

import (
	"context"
	"fmt"
	"net"

	"github.com/agentd/agentd/app/api"
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

// serveMetrics serves the registry's /metrics on its own listener
// (api.ServeMetrics) while the app runs. The registry is handed to
// features.Open (dial queues, embedder, stores) and api.New (requests by
// route); without the flag nothing is collected and requests pay one nil
// check.
func (a *App) serveMetrics(ln net.Listener, reg *metrics.Registry) {
	a.onClose(func() error { ln.Close(); return nil })
	a.goWorker(func(ctx context.Context) error { return api.ServeMetrics(ctx, ln, reg, a.log) })
	a.metricsLn = ln
}

// MetricsAddr is the address /metrics is served on ("" when off).
func (a *App) MetricsAddr() string {
	if a.metricsLn == nil {
		return ""
	}
	return a.metricsLn.Addr().String()
}
