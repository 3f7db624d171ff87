package access

import (
	"context"
	"sync"
	"time"

	"github.com/agentd/agentd/storage/orgstore"
)

// RateStore leases blocks of a key's budget, shared by every process on
// the database (the orgs store on PostgreSQL; see orgstore.LeaseRate).
type RateStore interface {
	LeaseRate(ctx context.Context, key string, limit, want int, window time.Duration, now time.Time, unused orgstore.Unused) (orgstore.Lease, error)
}

// Limiter is the per-key rate limit: limit requests per window (the API
// keys'; on PostgreSQL also the chat widget's per-visitor, per-address and
// session limits, under keys "widget:..." that no key id takes). Without a
// store it is an exact sliding-window log in this process (one process
// per SQLite file is the common case, and a write per request would cost
// the file its read throughput). With one, the budget is shared by every
// process on the database: a process leases a block of it and admits
// from the block in memory, so only the request that finds its block
// empty makes a round trip (see lease.go for the sizes and the bound).
type Limiter struct {
	local  *rateLimiter
	shared RateStore
	leases *leases
}

// NewLimiter makes a limiter over window; shared may be nil (this process
// only).
func NewLimiter(window time.Duration, shared RateStore) *Limiter {
	l := &Limiter{local: newRateLimiter(window), shared: shared}
	if shared != nil {
		l.leases = newLeases(window, shared)
	}
	return l
}

// Allow admits or refuses one request of key at now, and returns what is
// left after it and when the oldest admission leaves the window. When the
// shared count fails, the process's own count answers and err says why.
func (l *Limiter) Allow(ctx context.Context, key string, limit int, now time.Time) (ok bool, remaining int, reset time.Time, err error) {
	if limit <= 0 {
		limit = DefaultRateLimit
	}
	if l.leases != nil {
		ok, remaining, reset, err = l.leases.allow(ctx, key, limit, now)
		if err == nil {
			return ok, remaining, reset, nil
		}
		ok, remaining, reset = l.local.allow(key, limit, now)
		return ok, remaining, reset, err
	}
	ok, remaining, reset = l.local.allow(key, limit, now)
	return ok, remaining, reset, nil
}

// rateLimiter is an exact sliding-window log per key: a request is admitted
// when fewer than limit requests were admitted in the last window.
type rateLimiter struct {
	window time.Duration
	mu     sync.Mutex
	keys   map[string]*keyWindow
	sweep  time.Time
}

// keyWindow is a ring of the admission times inside the window.
type keyWindow struct {
	mu    sync.Mutex
	times []int64 // unix nanoseconds, ring buffer of capacity limit
	head  int
	n     int
	last  int64
}

func newRateLimiter(window time.Duration) *rateLimiter {
	return &rateLimiter{window: window, keys: map[string]*keyWindow{}}
}

// allow admits or refuses one request of key at now, and returns what is
// left after it and when the oldest admission leaves the window.
func (l *rateLimiter) allow(key string, limit int, now time.Time) (ok bool, remaining int, reset time.Time) {
	l.mu.Lock()
	kw := l.keys[key]
	if kw == nil || len(kw.times) != limit {
		kw = &keyWindow{times: make([]int64, limit)}
		l.keys[key] = kw
	}
	if now.Sub(l.sweep) > l.window {
		l.sweep = now
		for k, w := range l.keys {
			w.mu.Lock()
			idle := now.UnixNano()-w.last > int64(l.window)
			w.mu.Unlock()
			if idle && w != kw {
				delete(l.keys, k)
			}
		}
	}
	l.mu.Unlock()

	kw.mu.Lock()
	defer kw.mu.Unlock()
	t := now.UnixNano()
	cut := t - int64(l.window)
	for kw.n > 0 && kw.times[kw.head] <= cut {
		kw.head = (kw.head + 1) % limit
		kw.n--
	}
	if kw.n < limit {
		kw.times[(kw.head+kw.n)%limit] = t
		kw.n++
		kw.last = t
		ok = true
	}
	reset = time.Unix(0, kw.times[kw.head]+int64(l.window))
	return ok, limit - kw.n, reset
}
