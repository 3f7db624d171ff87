package testkit

import (
	"fmt"
	"testing"
	"time"
)

// Eventually waits until cond holds, polling it (1 ms at first, backing off
// to 50 ms), and fails the test with what, formatted, when it still does
// not after within. It is the wait on a condition that replaces a fixed
// sleep: it returns as soon as the condition holds, and a slow machine
// only makes it wait longer, never fail.
func Eventually(t testing.TB, within time.Duration, cond func() bool, what string, args ...any) {
	t.Helper()
	if !Within(within, cond) {
		t.Fatalf("after %v: %s", within, fmt.Sprintf(what, args...))
	}
}

// Within polls cond as Eventually does and reports whether it held before
// within ran out, for tests that check a condition never comes about
// (false is then the pass) or report the failure themselves.
func Within(within time.Duration, cond func() bool) bool {
	end := time.Now().Add(within)
	pause := time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(pause) // the helper's own poll: the one sleep a wait on a condition needs
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// WithinEvery is Within polling every period, for a condition costly to
// check (re-reading logs while a benchmark measures CPU, a restore).
func WithinEvery(within, period time.Duration, cond func() bool) bool {
	end := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(period) // the helper's own poll
	}
}

// Never checks that cond does not come to hold for the whole of within,
// polling it as Eventually does, and fails the test with what, formatted,
// as soon as it does. A check that something does not happen has no event
// to wait on: the span is the test's input, and a breach shows at once.
func Never(t testing.TB, within time.Duration, cond func() bool, what string, args ...any) {
	t.Helper()
	if Within(within, cond) {
		t.Fatalf("within %v: %s", within, fmt.Sprintf(what, args...))
	}
}
