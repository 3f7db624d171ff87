package widget

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/errs"
)

// Limits counts the per-visitor, per-address and session limits in the
// database every process shares: *access.Limiter over the orgs store,
// which admits from blocks of each key's budget leased from the database
// (app/access/lease.go), so N processes admit the limit plus at most one
// block per process in a window, not N times the limit.
type Limits interface {
	Allow(ctx context.Context, key string, limit int, now time.Time) (ok bool, remaining int, reset time.Time, err error)
}

// errLimits is the answer when the shared count cannot be read: a 503 with
// Retry-After, as any request that finds the database away.
const errLimits = "the chat's limits cannot be counted: the database did not answer; retry shortly"

// take counts one event of key against w: in w itself without shared
// Limits (one process), else in the database under "widget:<kind>:<key>",
// a name no API key id takes. When over the limit it returns how long
// until an event fits again.
func (s *Service) take(ctx context.Context, w *window, kind, key string, now time.Time) (bool, time.Duration, error) {
	if s.d.Limits == nil {
		ok, after := w.take(key, now)
		return ok, after, nil
	}
	ok, _, reset, err := s.d.Limits.Allow(ctx, "widget:"+kind+":"+key, w.limit, now)
	if errors.Is(err, context.Canceled) {
		return false, 0, err
	}
	if err != nil {
		return false, 0, errs.Wrap(errs.Unavailable, errLimits, err)
	}
	return ok, reset.Sub(now), nil
}

// addrKey is the per-address limits' key: an IPv6 client is counted by
// its /64, which one household or host can otherwise rotate through.
func addrKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Is4() || a.Is4In6() {
		return addr
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// window counts events per key in fixed windows, in memory: the limits of
// one process on SQLite, where a lease would be a write on the file's one
// writer for every visitor message (without shared Limits).
type window struct {
	mu    sync.Mutex
	size  time.Duration
	limit int
	m     map[string]*slot
}

type slot struct {
	start time.Time
	n     int
}

func newWindow(limit int, size time.Duration) *window {
	return &window{size: size, limit: limit, m: map[string]*slot{}}
}

// take counts one event of key; when over the limit it returns how long
// until the window turns.
func (w *window) take(key string, now time.Time) (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.m) > 100000 { // drop finished windows so the map stays bounded
		for k, s := range w.m {
			if now.Sub(s.start) >= w.size {
				delete(w.m, k)
			}
		}
	}
	s := w.m[key]
	if s == nil || now.Sub(s.start) >= w.size {
		s = &slot{start: now}
		w.m[key] = s
	}
	if s.n >= w.limit {
		return false, s.start.Add(w.size).Sub(now)
	}
	s.n++
	return true, 0
}

// streams holds the visitors with an answer in progress.
type streams struct {
	mu   sync.Mutex
	open map[string]bool
}

func (s *streams) begin(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] {
		return false
	}
	s.open[key] = true
	return true
}

func (s *streams) end(key string) {
	s.mu.Lock()
	delete(s.open, key)
	s.mu.Unlock()
}
