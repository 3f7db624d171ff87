package dial

import (
	"context"
	"fmt"
	"time"
)

// Sim is the built-in simulator dialer (--dialer sim) for development and
// tests. The outcome is chosen by the last four digits of the callee number:
//
//	...0486  busy       (connecting, ringing, then busy; SIP 486)
//	...0408  no_answer  (connecting, ringing for RingFor, then no answer; SIP 408)
//	...0500  failed     (connecting, then "simulated failure: SIP 500 Server Internal Error")
//	other    completed  (connecting, ringing for RingFor, active for TalkFor)
//
// Cancelling the context hangs up at once: Dial returns StatusCancelled.
// A Sim holds no state between calls and may dial many calls at once.
type Sim struct {
	RingFor time.Duration // how long the phone rings; 0 means 1 s, negative means not at all
	TalkFor time.Duration // how long an answered call lasts; 0 means 3 s (--sim-call-seconds)
}

var _ Dialer = (*Sim)(nil)

// Simulator outcomes, by the callee number's last four digits.
const (
	SimBusySuffix     = "0486"
	SimNoAnswerSuffix = "0408"
	SimFailedSuffix   = "0500"
	SimFailureReason  = "simulated failure: SIP 500 Server Internal Error"
)

// Name identifies the dialer in logs and on call records.
func (s *Sim) Name() string { return "sim" }

// Dial plays out one simulated attempt; see Sim for the outcomes.
func (s *Sim) Dial(ctx context.Context, c Call, progress func(Progress)) (Result, error) {
	if ctx.Err() != nil {
		return Result{Status: StatusCancelled}, nil
	}
	ring, talk := s.RingFor, s.TalkFor
	if ring == 0 {
		ring = time.Second
	}
	if talk == 0 {
		talk = 3 * time.Second
	}
	tag := fmt.Sprintf("%s-%d", c.ID, c.Attempt)
	report := func(status string) {
		if progress != nil {
			progress(Progress{Status: status, At: time.Now(), RoomID: "sim-room-" + tag,
				JobID: "sim-job-" + tag, SIPParticipantID: "sim-sip-" + tag})
		}
	}

	suffix := lastDigits(c.PhoneNumber, 4)
	report(StatusConnecting)
	if suffix == SimFailedSuffix {
		return Result{Status: StatusFailed, Reason: SimFailureReason, SIPCode: 500}, nil
	}
	report(StatusRinging)
	if suffix == SimBusySuffix {
		return Result{Status: StatusBusy, SIPCode: 486}, nil
	}
	if err := sleep(ctx, RealClock{}, ring); err != nil {
		return Result{Status: StatusCancelled}, nil
	}
	if suffix == SimNoAnswerSuffix {
		return Result{Status: StatusNoAnswer, SIPCode: 408}, nil
	}
	answered := time.Now()
	report(StatusActive)
	if err := sleep(ctx, RealClock{}, talk); err != nil {
		return Result{Status: StatusCancelled, Duration: time.Since(answered)}, nil
	}
	return Result{
		Status:   StatusCompleted,
		SIPCode:  200,
		Duration: talk,
		Summary:  fmt.Sprintf("Simulated call with %s lasted %s", c.PhoneNumber, talk),
	}, nil
}

// lastDigits returns the last n decimal digits of s, ignoring anything else.
func lastDigits(s string, n int) string {
	out := make([]byte, 0, n)
	for i := len(s) - 1; i >= 0 && len(out) < n; i-- {
		if s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}
