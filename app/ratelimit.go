package app

import (
	"sync"
	"time"

	"github.com/agentd/agentd/app/access"
)

// rateLimiter is an exact sliding-window log per key: a request is admitted
// when fewer than limit requests were admitted in the last window. It lives
// in the process; several agentd processes each apply the limit (README).
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
	if limit <= 0 {
		limit = access.DefaultRateLimit
	}
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
