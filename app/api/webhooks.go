package api

import (
	"context"

	"github.com/agentd/agentd/app/events"
)

// webhooksState is what the webhook and event handlers share.
type webhooksState struct {
	svc     *events.Service
	worker  *events.Worker
	stream  events.StreamConfig
	streams context.Context     // ends when the server stops, closing event streams
	guard   *events.StreamGuard // open streams per key, re-checked while open
}
