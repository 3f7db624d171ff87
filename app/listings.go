package app

import "context"

// listingsState is what the listings handlers share.
type listingsState struct{}

// wireListings sets up listings search.
func (a *App) wireListings(ctx context.Context) error { return nil }

// listingRoutes registers the listings routes.
func (s *Server) listingRoutes() {}
