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
	release, ok := g.Take(id, MaxStreamsPerKey)
	if !ok {
		return nil, nil, ErrTooManyStreams
	}
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
	return guardedSink{Sink: sink, allowed: allowed}, release, nil
}

// Take takes one of id's slots when fewer than limit are taken (other
// streams than events use it with ids of their own); release gives it
// back, once.
func (g *StreamGuard) Take(id string, limit int) (release func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[id] >= limit {
		return nil, false
	}
	g.open[id]++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			if g.open[id]--; g.open[id] <= 0 {
				delete(g.open, id)
			}
			g.mu.Unlock()
		})
	}, true
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
