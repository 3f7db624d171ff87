package dial

import (
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Pushback is a carrier's rate or capacity refusal: a SIP 403 or 503 with
// Retry-After, a trunk's "too many calls", LiveKit's 429 or
// resource_exhausted. The attempt is re-queued without being spent (it
// wraps ErrRetryLater) and the dial queue slows its pace for a while.
type Pushback struct {
	Reason     string        // e.g. "SIP 503 Service Unavailable (Retry-After 30)"
	RetryAfter time.Duration // what the carrier asked for; 0 when it did not say
}

func (p *Pushback) Error() string { return ErrRetryLater.Error() + ": " + p.Reason }

// Unwrap makes a Pushback an ErrRetryLater.
func (p *Pushback) Unwrap() error { return ErrRetryLater }

// Pace slowdown after pushback: each pushback doubles the interval between
// dial starts (up to maxSlowdown times the configured one) and holds it for
// the carrier's Retry-After, or pushbackHold when it gave none; each quiet
// hold after that halves it again until the configured pace is back.
const (
	maxSlowdown  = 16
	pushbackHold = 30 * time.Second
)

// pacer is the queue's slowdown state.
type pacer struct {
	mu     sync.Mutex
	log    *slog.Logger
	factor int       // 1: the configured pace
	until  time.Time // the current factor holds until then
	hold   time.Duration
}

// pushback slows the pace down at now.
func (p *pacer) pushback(now time.Time, pb *Pushback) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hold := pb.RetryAfter
	if hold <= 0 {
		hold = pushbackHold
	}
	if p.factor == 0 {
		p.factor = 1
	}
	p.factor = min(p.factor*2, maxSlowdown)
	p.hold = hold
	if u := now.Add(hold); u.After(p.until) {
		p.until = u
	}
	p.log.Warn("dial queue: carrier pushback, slowing down", "reason", pb.Reason,
		"slowdown", p.factor, "until", p.until.Format(time.RFC3339))
}

// slowdown is the factor in force at now, recovering step by step.
func (p *pacer) slowdown(now time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.factor > 1 && !now.Before(p.until) {
		p.factor /= 2
		p.until = p.until.Add(p.hold)
		if p.factor == 1 {
			p.log.Info("dial queue: pace recovered after carrier pushback")
		} else {
			p.log.Info("dial queue: pace recovering after carrier pushback", "slowdown", p.factor)
		}
	}
	return max(p.factor, 1)
}

// asPushback finds a Pushback in err.
func asPushback(err error) (*Pushback, bool) {
	var pb *Pushback
	ok := errors.As(err, &pb)
	return pb, ok
}
