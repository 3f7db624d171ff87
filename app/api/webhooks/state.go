package webhooks

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/agentd/agentd/app/events"
)

// Deps are what the webhook and event handlers use.
type Deps struct {
	Events     *events.Service
	Deliveries *events.Worker // nil when deliveries are off
	Stream     events.StreamConfig
	Streams    context.Context     // ends when the server stops, closing event streams
	Guard      *events.StreamGuard // open streams per key, re-checked while open
	Recheck    Rechecker
	Log        *slog.Logger
}

// Rechecker re-checks the credential of a long-lived request (the API's
// authentication: the same key or session, still valid, with a role that
// holds the capability).
type Rechecker interface {
	StillAllowed(r *http.Request, capability string) bool
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }
