package app

import "context"

// CallsConfig configures the dial queue and the dialer.
type CallsConfig struct{}

// callsState is what the call handlers share.
type callsState struct{}

// wireCalls sets up the scheduler, the dial queue and the dialer.
func (a *App) wireCalls(ctx context.Context) error { return nil }

// callRoutes registers the call routes.
func (s *Server) callRoutes() {}
