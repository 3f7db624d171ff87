// Package wakeup declares, once, the database wake-up channel that the
// background workers wait on (storage.Stores.Waker makes them). It lives
// outside storage so that embed, dial and the feature packages can name it
// without importing the package storage.
package wakeup

import "time"

// Waker is one wake-up channel of the database.
type Waker interface {
	// Wake returns a channel closed at the next notification; take it
	// before reading what it guards, so a commit in between is not missed.
	Wake() <-chan struct{}
	// IdlePoll is how long an idle worker may sleep between safety polls,
	// given the poll it would use without notifications.
	IdlePoll(poll time.Duration) time.Duration
}

// Next is w's next wake-up; nil (never) without a waker.
func Next(w Waker) <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.Wake()
}

// IdlePoll is how long a worker waiting on w may sleep between polls: poll
// itself without a waker.
func IdlePoll(w Waker, poll time.Duration) time.Duration {
	if w == nil {
		return poll
	}
	return w.IdlePoll(poll)
}
