package events

import (
	"time"

	"github.com/agentd/agentd/internal/safehttp"
)

// Config configures event delivery and the event stream of a server
// (flags of serve).
type Config struct {
	// AllowPrivate lets receivers live on loopback, private and link-local
	// addresses (--webhook-allow-private): on-premises receivers and tests.
	AllowPrivate bool
	Timeout      time.Duration   // per request; default 10 s
	Lease        time.Duration   // delivery claim lease; default Timeout + 20 s
	Poll         time.Duration   // look for other processes' events; default 1 s
	Concurrency  int             // requests in flight; default 64
	Schedule     []time.Duration // retry delays; default Backoff
	KeepAlive    time.Duration   // event stream keep-alive; default 15 s
	Recheck      time.Duration   // how often an open stream re-checks its key or session; default 5 s
	DisableAfter time.Duration   // an endpoint failing everything this long is disabled; default 24 h
	// Resolver, when set, resolves receiver hosts (tests).
	Resolver safehttp.Resolver
	// Disabled turns the delivery worker off (benchmarks of the write path).
	Disabled bool
}
