package api

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

// Serve serves s on ln until ctx ends, then ends the open event streams
// and shuts the HTTP server down gracefully within grace.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := s.httpServer()
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		s.log.Info("shutting down")
		s.Shutdown() // open event streams end, so Shutdown does not wait for them
		done <- hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-done
}

// ServeMetrics serves the registry's /metrics on ln (kept off the API port
// so that it can stay private) until ctx ends.
func ServeMetrics(ctx context.Context, ln net.Listener, reg *metrics.Registry, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	log.Info("metrics listening", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) && ctx.Err() == nil {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}
