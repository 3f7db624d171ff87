package app

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/app/events"
)

// maxStreamsPerKey bounds the event streams one key (or one user's
// sessions) holds open in this process: each costs a connection and a
// polling loop.
const maxStreamsPerKey = 5

// streamGuard counts open streams per key and says how often a stream
// re-checks the credential that opened it (issue 27 item 3: a stream
// opened before a revocation kept delivering events).
type streamGuard struct {
	recheck time.Duration
	mu      sync.Mutex
	open    map[string]int
}

func newStreamGuard(recheck time.Duration) *streamGuard {
	if recheck <= 0 {
		recheck = 5 * time.Second
	}
	return &streamGuard{recheck: recheck, open: map[string]int{}}
}

var errTooManyStreams = &Error{Kind: errs.RateLimited,
	Message: "too many open event streams for this key (at most 5): close one first"}

// watchStream takes one of the key's stream slots and, while ctx lasts,
// checks every recheck that the key or session is still valid and still
// holds events:read (through the key cache and the auth epoch, so the check
// costs one small query); when it is not, cancel ends the stream. release
// gives the slot back.
func (s *Server) watchStream(ctx context.Context, r *http.Request, cancel func()) (release func(), err error) {
	g := s.webhooks.guard
	if g == nil {
		g = newStreamGuard(0)
		s.webhooks.guard = g
	}
	id := principalFrom(r.Context()).KeyID
	g.mu.Lock()
	if g.open[id] >= maxStreamsPerKey {
		g.mu.Unlock()
		return nil, errTooManyStreams
	}
	g.open[id]++
	g.mu.Unlock()
	go func() {
		t := time.NewTicker(g.recheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !s.stillAllowed(r, capEventsRead) {
					cancel()
					return
				}
			}
		}
	}()
	return func() {
		g.mu.Lock()
		if g.open[id]--; g.open[id] <= 0 {
			delete(g.open, id)
		}
		g.mu.Unlock()
	}, nil
}

// stillAllowed re-checks the credential of a long-lived request: the same
// key or session, not revoked, expired or signed out, with a role that
// holds the capability. A database error keeps the stream (it will be
// checked again).
func (s *Server) stillAllowed(r *http.Request, capability string) bool {
	p := principalFrom(r.Context())
	var role string
	if p.Session != "" {
		np, err := s.sessionPrincipal(r, p.Session)
		if err != nil {
			return errs.KindOf(err) == errs.Internal
		}
		role = np.Role
	} else {
		key, err := parseAPIKey(r.Header, r.URL.RawQuery)
		if err != nil {
			return false
		}
		k, err := s.lookupKey(r.Context(), key)
		if err != nil {
			return err != errBadKey
		}
		role = k.Role
	}
	return access.Can(role, capability)
}

// guardedSink checks the credential again before each event, so nothing
// logged after a revocation is sent even between two periodic checks.
type guardedSink struct {
	events.Sink
	allowed func() bool
}

var errStreamCredential = errors.New("the stream's key or session is no longer valid")

func (g guardedSink) Send(e events.Event, body []byte) error {
	if !g.allowed() {
		return errStreamCredential
	}
	return g.Sink.Send(e, body)
}
