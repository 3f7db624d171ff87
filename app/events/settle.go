package events

import "time"

// settleSteps are the quick looks a reader takes after a wake-up by new
// events while it otherwise sleeps long (PostgreSQL with notifications
// from every process). There, an event whose transaction committed while
// an older transaction was still running is readable only once that one
// ends (see sqldb.Pos), and that one's commit may send no notification
// (it logged no event): without these looks the event would wait for the
// 30 s safety poll.
var settleSteps = [...]time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second}

// settler hands out the shortened waits after each wake-up.
type settler struct{ step int }

func newSettler() settler { return settler{step: len(settleSteps)} }

// woke starts the quick looks again.
func (s *settler) woke() { s.step = 0 }

// wait is d, or the next quick look if it comes sooner; long says d is
// the long idle poll (elsewhere the poll itself looks soon enough).
func (s *settler) wait(d time.Duration, long bool) time.Duration {
	if !long || s.step >= len(settleSteps) {
		return d
	}
	d = min(d, settleSteps[s.step])
	s.step++
	return d
}
