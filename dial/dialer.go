// Package dial places outbound calls: the pure time-window arithmetic of the
// scheduler, the durable dial queue, and the Dialer implementations.
package dial

import (
	"context"
	"errors"
	"time"
)

// Call states a dialer reports. They are the stored call statuses.
const (
	StatusConnecting = "connecting"
	StatusRinging    = "ringing"
	StatusActive     = "active"
	StatusCompleted  = "completed"
	StatusBusy       = "busy"
	StatusNoAnswer   = "no_answer"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
)

// OutcomeVoicemail is how an answered attempt is recorded when the voice
// agent reported "voicemail" for it: a retriable outcome (retryOnVoicemail).
const OutcomeVoicemail = "voicemail"

// Call is what a dialer needs to place one attempt of an outbound call.
type Call struct {
	ID           string // call id (stable across attempts)
	Attempt      int    // 1 for the first attempt
	OrgID        string
	AgentID      string
	AgentName    string
	Instructions string         // agent instructions, passed to the voice agent
	PhoneNumber  string         // callee, E.164
	CallerID     string         // caller ID shown, E.164
	Metadata     map[string]any // call metadata passed to the voice agent
}

// Progress is one non-final step of a call, reported while Dial runs.
type Progress struct {
	Status           string // StatusConnecting, StatusRinging or StatusActive
	At               time.Time
	RoomID           string // set when known (connecting onwards)
	JobID            string
	SIPParticipantID string
}

// Result is how an attempt ended.
type Result struct {
	Status   string        // StatusCompleted, StatusBusy, StatusNoAnswer, StatusFailed or StatusCancelled
	Reason   string        // failure reason (failed), e.g. "SIP 404 Not Found"
	SIPCode  int           // final SIP status code when known
	Duration time.Duration // talk time of a completed call
	Summary  string        // set by dialers that know one (sim)
}

// Dialer places calls. Dial blocks until the attempt is final: it reports
// connecting/ringing/active through progress (never concurrently) and returns
// the Result. Cancelling ctx hangs the call up; Dial then returns a Result with
// StatusCancelled. A non-nil error means the attempt could not be placed at
// all: wrapping ErrRetryLater re-queues the call without spending an attempt
// (trunk rate or concurrency limit, infrastructure briefly down); any other
// error fails the attempt with the error text as reason.
type Dialer interface {
	Name() string
	Dial(ctx context.Context, c Call, progress func(Progress)) (Result, error)
}

// ErrRetryLater marks a temporary refusal: try the same attempt again later.
var ErrRetryLater = errors.New("dialer busy, retry later")

// ErrNotConfigured is returned when no telephony dialer is configured.
var ErrNotConfigured = errors.New("telephony service not configured")
