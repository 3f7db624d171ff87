package dial

import (
	"time"

	"github.com/agentd/agentd/internal/wakeup"
	"github.com/agentd/agentd/storage/callstore"
)

// Deps are the stores the dial queue and the scheduler use.
type Deps struct {
	Calls *callstore.Calls
	// Queued wakes on calls created, rescheduled or queued by any process
	// (storage.Stores.Waker(ChanCalls)); nil: only Wake and the poll.
	Queued wakeup.Waker
}

// wake is the next wake-up of calls stored; nil (never) without a waker.
func (d Deps) wake() <-chan struct{} { return wakeup.Next(d.Queued) }

// idlePoll is how long an idle loop may sleep between polls.
func (d Deps) idlePoll(poll time.Duration) time.Duration {
	return wakeup.IdlePoll(d.Queued, poll)
}
