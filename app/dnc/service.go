package dnc

import "github.com/agentd/agentd/storage/callstore"

// Deps are the stores the do-not-call feature uses.
type Deps struct {
	Calls *callstore.Calls // the do-not-call list lives beside the calls it blocks
}

// Service is the do-not-call feature: the HTTP handlers in app, the
// dashboard and the CLI call the same methods.
type Service struct{ db Deps }

// New returns the do-not-call feature over its stores.
func New(d Deps) *Service { return &Service{db: d} }
