package errs

import (
	"sync/atomic"
	"time"
)

// DBUnavailable is the message of a request that failed because the
// database could not be reached (a PostgreSQL restart or failover): the
// answer is 503 with Retry-After DBRetryAfter, and the client may send the
// request again.
const DBUnavailable = "database unavailable: PostgreSQL cannot be reached, retry shortly"

// DBRetryAfter is Retry-After on a 503, in seconds: a restarted or promoted
// database is back within a few, and the pool reconnects at once.
const DBRetryAfter = "2"

// Throttle lets one log line of a kind through a second and counts those it
// held back: while the database is away every request fails alike.
type Throttle struct{ sec, held atomic.Int64 }

// Allow reports whether to log a line, always when throttled is false, and
// how many were held back since the last line let through.
func (t *Throttle) Allow(throttled bool) (bool, int64) {
	if !throttled {
		return true, 0
	}
	sec, last := time.Now().Unix(), t.sec.Load()
	if sec == last || !t.sec.CompareAndSwap(last, sec) {
		t.held.Add(1)
		return false, 0
	}
	return true, t.held.Swap(0)
}

// Once is Allow(true) without the count.
func (t *Throttle) Once() bool {
	ok, _ := t.Allow(true)
	return ok
}
