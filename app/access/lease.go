package access

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/storage/orgstore"
)

// leases admits requests from blocks of each key's budget leased from the
// database (orgstore.LeaseRate). A block is counted in the bucket
// (window/60) it was leased in and is void when that bucket ends; what is
// left of it is handed back in the call that leases the next one. Every
// admission is therefore counted, in the database, in the bucket it
// happened in, before it happened, and a lease sees at least one window of
// buckets: across all processes no window admits more than the limit (one
// block more per process whose clock is a bucket off). A process that
// stops asking keeps at most its last block counted until it leaves the
// window, so others are short of at most one block per idle process.
//
// The block's size follows the process's rate: 1 after a quiet bucket,
// what the last bucket used, doubled while blocks run out inside their
// bucket, at most a tenth of the limit. A process that takes 500 requests
// a second of a key gets blocks of up to limit/10 and makes one round trip
// per block (at least one per bucket); a process that takes one a minute
// makes one per request, as before.
type leases struct {
	window time.Duration
	store  RateStore
	mu     sync.Mutex
	keys   map[string]*block
	sweep  time.Time
	n      atomic.Int64 // leases asked for
}

// block is one key's current lease in this process.
type block struct {
	mu sync.Mutex
	lease
}

// lease is a block's state.
type lease struct {
	limit     int
	bucket    int64 // the bucket it is counted in
	end       int64 // unix ns: void from then
	granted   int
	left      int
	want      int       // the size asked for
	refused   bool      // the window was full: refuse until end
	shared    int       // the window's budget left beyond this block when granted
	reset     time.Time // from the lease
	exhausted bool      // ran out before end
}

func newLeases(window time.Duration, store RateStore) *leases {
	return &leases{window: window, store: store, keys: map[string]*block{}}
}

func (ls *leases) block(key string, now time.Time) *block {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if now.Sub(ls.sweep) > ls.window { // forget keys idle for a window
		ls.sweep = now
		cut := now.Add(-ls.window).UnixNano()
		for k, b := range ls.keys {
			if b.mu.TryLock() {
				if b.end < cut {
					delete(ls.keys, k)
				}
				b.mu.Unlock()
			}
		}
	}
	b := ls.keys[key]
	if b == nil {
		b = &block{}
		ls.keys[key] = b
	}
	return b
}

// allow admits one request of key from its block, leasing a new block
// when the block is void or used up.
func (ls *leases) allow(ctx context.Context, key string, limit int, now time.Time) (bool, int, time.Time, error) {
	b := ls.block(key, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	t := now.UnixNano()
	if t < b.end && b.limit == limit {
		if b.left > 0 {
			b.left--
			b.exhausted = b.left == 0
			return true, b.shared + b.left, b.reset, nil
		}
		if b.refused {
			return false, 0, b.reset, nil
		}
	}
	width := int64(ls.window / orgstore.RateBuckets)
	want := b.nextSize(t/width, limit)
	var unused orgstore.Unused
	if b.left > 0 {
		unused = orgstore.Unused{Bucket: b.bucket, N: b.left}
	}
	ls.n.Add(1)
	l, err := ls.store.LeaseRate(ctx, key, limit, want, ls.window, now, unused)
	if err != nil {
		return false, 0, time.Time{}, err
	}
	b.lease = lease{limit: limit, bucket: l.Bucket, end: l.End.UnixNano(), granted: l.Granted, left: l.Granted,
		want: want, refused: l.Granted == 0, shared: max(0, limit-l.Used-l.Granted), reset: l.Reset}
	if b.refused {
		return false, 0, b.reset, nil
	}
	b.left--
	b.exhausted = b.left == 0
	return true, b.shared + b.left, b.reset, nil
}

// nextSize is the size of the block to lease in bucket now.
func (b *block) nextSize(now int64, limit int) int {
	most := max(1, limit/10)
	switch {
	case b.limit != limit || b.bucket < now-1:
		return 1 // first, or after a quiet bucket
	case b.exhausted || b.refused:
		return min(most, max(1, 2*b.want))
	}
	return min(most, max(1, b.granted-b.left)) // what the last bucket used
}

// count is how many leases were asked for (tests).
func (ls *leases) count() int { return int(ls.n.Load()) }
