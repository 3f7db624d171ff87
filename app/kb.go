package app

import "context"

// KBConfig configures knowledge processing (embedder, worker).
type KBConfig struct{}

// kbState is what the knowledge-base handlers share.
type kbState struct{}

// wireKB sets up the embedder and the background knowledge worker.
func (a *App) wireKB(ctx context.Context) error { return nil }

// kbRoutes registers the knowledge-base routes.
func (s *Server) kbRoutes() {}
