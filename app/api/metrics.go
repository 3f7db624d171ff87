package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/metrics"
)

// httpMetrics is the request side of the metrics: one metrics.Route per
// entry of the route table, by the entry's index, so a request's label is
// its route pattern, looked up without hashing.
type httpMetrics struct {
	reg    *metrics.Registry
	routes []*metrics.Route
	table  func() []route
}

// newHTTPMetrics makes the metrics of every route in s's table.
func newHTTPMetrics(reg *metrics.Registry, s *Server) *httpMetrics {
	m := &httpMetrics{reg: reg, table: func() []route { return s.table }}
	for _, rt := range s.table {
		m.routes = append(m.routes, reg.Route(rt.method, rt.path))
	}
	return m
}

// observe records one request; route is 1 + the index of the matched
// route in the table, 0 when none matched.
func (m *httpMetrics) observe(method string, route, status int, d time.Duration) {
	m.route(method, route).Observe(status, d)
}

func (m *httpMetrics) route(method string, route int) *metrics.Route {
	switch {
	case route > 0 && route <= len(m.routes):
		return m.routes[route-1]
	case route > len(m.routes):
		// A route added after the server was wired (tests).
		rt := m.table()[route-1]
		return m.reg.Route(rt.method, rt.path)
	}
	return m.reg.UnmatchedRoute(method)
}

// countRateLimited records a request refused by the rate limit.
func (s *Server) countRateLimited(r *http.Request) {
	if s.metrics == nil {
		return
	}
	if ri := requestInfoFrom(r.Context()); ri != nil {
		s.metrics.route(r.Method, ri.route).RateLimited()
	}
}

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

// wireMetrics makes the registry when --metrics-addr is set: request
// metrics for every route, the store collector, and the /metrics server on
// its own listener (kept off the API port so that it can stay private).
// Without the flag nothing is collected and requests pay one nil check.
func (a *App) wireMetrics(ln net.Listener) error {
	if ln == nil {
		return nil
	}
	reg := metrics.New()
	if err := reg.CollectStore(dbGauges{a.features}); err != nil {
		ln.Close()
		return err
	}
	a.srv.metrics = newHTTPMetrics(reg, a.srv)
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
	return nil
}

// MetricsAddr is the address /metrics is served on ("" when off).
func (a *App) MetricsAddr() string {
	if a.metricsLn == nil {
		return ""
	}
	return a.metricsLn.Addr().String()
}

// queueObserver is the metrics observer of a dial queue using dialer (nil
// when metrics are off).
func (a *App) queueObserver(dialer string) dial.QueueObserver {
	if a.srv.metrics == nil {
		return nil
	}
	return a.srv.metrics.reg.Queue(dialer)
}

// timedEmbedder times the embedder's calls when metrics are on.
func (a *App) timedEmbedder(e embed.Embedder) embed.Embedder {
	if a.srv.metrics == nil {
		return e
	}
	return a.srv.metrics.reg.Embedder(e)
}

// dbGauges is what the store collector reads, from the stores that hold it.
type dbGauges struct{ f *features.Set }

func (g dbGauges) CallsInFlight(ctx context.Context) (map[string]int, error) {
	return g.f.Stores.Calls.CallsInFlight(ctx)
}

func (g dbGauges) KBBacklogByStatus(ctx context.Context) (map[string]int, error) {
	return g.f.Stores.KB.KBBacklogByStatus(ctx)
}

func (g dbGauges) PoolStats() map[string]sql.DBStats { return g.f.Stores.PoolStats() }
