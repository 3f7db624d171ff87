package wakeup

import (
	"testing"
	"time"
)

// fixed is a waker whose channel is already closed and whose idle poll is
// a fixed one.
type fixed struct {
	ch   chan struct{}
	poll time.Duration
}

func (f fixed) Wake() <-chan struct{}                { return f.ch }
func (f fixed) IdlePoll(time.Duration) time.Duration { return f.poll }

func TestWithoutAWaker(t *testing.T) {
	if ch := Next(nil); ch != nil {
		t.Fatal("Next(nil) is a channel; want nil, which never fires")
	}
	if got := IdlePoll(nil, time.Second); got != time.Second {
		t.Fatalf("IdlePoll(nil, 1s) = %v, want the poll itself", got)
	}
}

func TestWithAWaker(t *testing.T) {
	w := fixed{ch: make(chan struct{}), poll: 30 * time.Second}
	close(w.ch)
	select {
	case <-Next(w):
	default:
		t.Fatal("Next(w) is not w's channel")
	}
	if got := IdlePoll(w, time.Second); got != 30*time.Second {
		t.Fatalf("IdlePoll(w, 1s) = %v, want the waker's 30s", got)
	}
}
