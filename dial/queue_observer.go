package dial

import "time"

// QueueObserver is told what a dial queue does, for metrics (set at wiring
// as QueueConfig.Observer; internal/metrics implements it). Its methods are
// called on the queue's goroutines and must not block.
type QueueObserver interface {
	// QueueStarted gives the queue's limits after defaults: calls started
	// per second and attempts dialled at once.
	QueueStarted(cps float64, maxConcurrent int)
	// DialStarted is called when an attempt was claimed and is being dialled.
	DialStarted(dialer string)
	// DialEnded is called once per DialStarted with how the attempt ended:
	// completed, busy, no_answer, failed, cancelled, or retry_later when
	// the dialer gave it back without using an attempt.
	DialEnded(dialer, outcome string)
	// Paced is called with each wait for the token bucket (the CPS budget).
	Paced(wait time.Duration)
}

// OutcomeRetryLater is the DialEnded outcome of an attempt the dialer gave
// back with ErrRetryLater (re-queued, no attempt used).
const OutcomeRetryLater = "retry_later"

// noObserver is the QueueObserver of a queue without metrics.
type noObserver struct{}

func (noObserver) QueueStarted(float64, int) {}
func (noObserver) DialStarted(string)        {}
func (noObserver) DialEnded(string, string)  {}
func (noObserver) Paced(time.Duration)       {}
