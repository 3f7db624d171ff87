package dial

import (
	"context"
	"errors"
	"time"
)

// A call's audio, as the voice loop (app/voice) sees it whatever carries it:
// RTP on a direct SIP call (dial/media), WebRTC or a WebSocket in a browser.
// Audio is 8 kHz, signed 16-bit, mono PCM in frames of 20 ms. The
// transport owns the call's clock: every 20 ms it takes one frame of the
// caller's audio out of its jitter buffer (silence where packets were lost
// or late) and sends one frame of the agent's queued audio (nothing when
// the queue is empty), so the agent's packets stay paced whatever the loop
// is doing.
const (
	SampleRate    = 8000
	FrameSamples  = 160
	FrameDuration = 20 * time.Millisecond
)

// Input is one step of the caller's side: a 20 ms frame of audio, or a
// DTMF digit the caller pressed (PCM nil, Digit one of 0-9 * # A-D).
type Input struct {
	PCM   []int16
	Digit byte
}

// Media is one call's audio in both directions. Safe for use by one reader
// and one writer at a time.
type Media interface {
	// Read blocks for the caller's next frame or digit. It returns an error
	// (io.EOF) once the call's media has ended, or ctx's error.
	Read(ctx context.Context) (Input, error)
	// Write queues agent audio after what is queued; the transport sends it
	// 20 ms a packet on its own clock.
	Write(pcm []int16) error
	// Clear drops the agent audio queued and not yet sent (barge-in).
	Clear()
	// Sent is how many agent samples have been sent since the call began
	// (queued audio counts once its packet has left).
	Sent() int64
	// SendDigits sends DTMF digits to the far end (RFC 4733 where the peer
	// takes telephone-event, SIP INFO otherwise).
	SendDigits(ctx context.Context, digits string) error
	// Record tees both directions into rec, aligned on the transport's
	// 20 ms clock; nil stops recording.
	Record(rec Recorder)
}

// Recorder receives both directions of a call, one 20 ms tick at a time:
// the caller's frame and the agent's frame sent in the same tick (nil when
// the agent was silent).
type Recorder interface {
	RecordFrame(caller, agent []int16)
}

// Session is an answered call handed to a Talker.
type Session struct {
	// Call is the call: on an outbound call the one being dialled; on an
	// inbound call ID is the recorded call's id (InboundStarted) and
	// OrgID, AgentID are empty for the Talker to look up.
	Call      Call
	Direction string // "outbound", "inbound" or "web"
	From, To  string // the two numbers (or the browser's label), for the transcript
	Media     Media
	// MaxDuration is the call's limit: the agent says goodbye before it.
	MaxDuration time.Duration
	// Transfer hands the call on; nil where the transport cannot (the
	// LiveKit dialer, a browser).
	Transfer Transfer
	// Watch, when set, hears the call as it happens: each transcript line
	// and each answer's latency (a browser session shows them live). It
	// must not block.
	Watch func(TalkEvent)
}

// Transfer hands an answered call to someone else (dial/sipdial). A
// target is an E.164 number (dialled through the trunk) or a sip: URI.
type Transfer interface {
	// Refer asks the far end to call target itself (SIP REFER) and waits
	// for the outcome it reports. A refusal of the REFER itself wraps
	// ErrReferRefused: the caller may then Dial and bridge instead.
	Refer(ctx context.Context, target string) error
	// Dial calls target on a second leg and returns once it answered;
	// a leg that was not answered fails with a *LegError.
	Dial(ctx context.Context, target string) (Leg, error)
}

// ErrReferRefused: the far end (or the trunk) would not take the REFER.
var ErrReferRefused = errors.New("REFER refused")

// Leg is a second call placed for a transfer.
type Leg interface {
	Media() Media
	// Done is closed once the leg has ended (either side hung up).
	Done() <-chan struct{}
	// Hangup ends the leg (BYE) and waits for it to be over.
	Hangup()
}

// LegError is a second leg that was not answered: Status is
// StatusBusy, StatusNoAnswer or StatusFailed.
type LegError struct {
	Status string
	Reason string
}

func (e *LegError) Error() string {
	if e.Reason != "" {
		return e.Status + ": " + e.Reason
	}
	return e.Status
}

// TalkEvent is one thing that happened on a call: a transcript line (Role
// set) or an answer's latency (Latency set).
type TalkEvent struct {
	Role        string // agent, user or tool
	Text        string
	Interrupted bool
	Latency     *TurnLatency
}

// TurnLatency is where one answer's time went, in milliseconds.
type TurnLatency struct {
	EndpointingMs     int64 `json:"endpointingMs"`
	TranscribeMs      int64 `json:"transcribeMs"`
	ModelFirstTokenMs int64 `json:"modelFirstTokenMs"`
	SpeechFirstByteMs int64 `json:"speechFirstByteMs"`
	VoiceToVoiceMs    int64 `json:"voiceToVoiceMs"`
}

// Talker speaks for an agent on an answered call (app/voice). Talk returns
// when the agent ends the call (the dialer then hangs up) or once ctx ends
// (the far end hung up or the call was cancelled).
type Talker interface {
	Talk(ctx context.Context, s Session) TalkEnd
}

// TalkEnd is how the agent's side of a call ended.
type TalkEnd struct {
	// Reason names the service that failed ("speech-to-text service
	// unavailable"): the call is recorded failed with it. Empty otherwise.
	Reason string
	// AnsweredBy is human, machine or unknown where the talker decided it.
	AnsweredBy string
}
