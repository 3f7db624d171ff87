package events

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/errs"
)

// MaxStreamsPerKey bounds the event streams one key (or one user's
// sessions) holds open in a process: each costs a connection and a
// polling loop.
const MaxStreamsPerKey = 5

// StreamGuard counts open streams per credential and has each re-check its
// credential while open (issue 27 item 3: a stream opened before a
// revocation kept delivering events).
type StreamGuard struct {
	recheck time.Duration
	mu      sync.Mutex
	open    map[string]int
}

// NewStreamGuard re-checks every recheck (default 5 s).
func NewStreamGuard(recheck time.Duration) *StreamGuard {
	if recheck <= 0 {
		recheck = 5 * time.Second
	}
	return &StreamGuard{recheck: recheck, open: map[string]int{}}
}

// ErrTooManyStreams refuses a stream over MaxStreamsPerKey.
var ErrTooManyStreams = errs.New(errs.RateLimited, "too many open event streams for this key (at most 5): close one first")

// ErrCredentialGone ends a stream whose key or session is no longer valid.
var ErrCredentialGone = errors.New("the stream's key or session is no longer valid")

// Watch takes one of id's stream slots and, until ctx ends, calls allowed
// every recheck; when it says no, cancel ends the stream. release gives
// the slot back. The returned sink also asks allowed before every event,
// so nothing logged after a revocation is sent between two checks.
func (g *StreamGuard) Watch(ctx context.Context, id string, allowed func() bool, cancel func(), sink Sink) (Sink, func(), error) {
	g.mu.Lock()
	if g.open[id] >= MaxStreamsPerKey {
		g.mu.Unlock()
		return nil, nil, ErrTooManyStreams
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
				if !allowed() {
					cancel()
					return
				}
			}
		}
	}()
	release := func() {
		g.mu.Lock()
		if g.open[id]--; g.open[id] <= 0 {
			delete(g.open, id)
		}
		g.mu.Unlock()
	}
	return guardedSink{Sink: sink, allowed: allowed}, release, nil
}

// guardedSink checks the credential before each event.
type guardedSink struct {
	Sink
	allowed func() bool
}

func (g guardedSink) Send(e Event, body []byte) error {
	if !g.allowed() {
		return ErrCredentialGone
	}
	return g.Sink.Send(e, body)
}
