package widget

import (
	"net/netip"
	"sync"
	"time"
)

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

// window counts events per key in fixed windows, in memory: per-visitor
// and per-address limits are about bursts on one process (the daily cap,
// which must hold across processes, is counted in the database).
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
