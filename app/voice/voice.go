// Package voice is agentd's voice loop: on an answered call (dial.Talker)
// the agent listens (voice activity and end of turn on the caller's
// audio), transcribes (speech-to-text), answers through the conversation
// engine exactly as chat does, and speaks sentence by sentence while the
// model still streams (text-to-speech). It handles barge-in, DTMF, the
// end_call tool, silence and the call's maximum duration, and answers
// every failure with a sentence and a named reason. No HTTP here.
package voice

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// Transcriber is speech-to-text (*speech.STT).
type Transcriber interface {
	Transcribe(ctx context.Context, req speech.TranscribeRequest) (string, error)
}

// Speaker is text-to-speech (*speech.TTS).
type Speaker interface {
	Speak(ctx context.Context, req speech.SpeakRequest) (speech.Stream, error)
}

// Recording is one call's recording file (*recordings.File).
type Recording interface {
	dial.Recorder
	Close() error
}

// Recordings starts a call's recording (*recordings.Service).
type Recordings interface {
	Start(orgID, callID string) (Recording, error)
}

// Engine is the conversation engine (*conversations.Service).
type Engine interface {
	StartCall(ctx context.Context, orgID, agentID, callID string) (conversations.View, error)
	AnswerVoice(ctx context.Context, orgID, convID string, in conversations.VoiceInput, onDelta func(string)) (conversations.VoiceAnswer, error)
	StoreVoiceTurn(ctx context.Context, orgID, convID, user string, a conversations.VoiceAnswer, spoken string) error
	EndCall(ctx context.Context, orgID, convID string) error
}

// Calls reads the call a Talker speaks on, whatever its organization (an
// inbound Session names only its id), and keeps its record: transcript
// lines as they are heard and the turns' latency.
type Calls interface {
	TalkerCall(ctx context.Context, id string) (callstore.Call, error)
	AppendTranscript(ctx context.Context, orgID, agentID, callID string, lines []Line) error
	SaveLatency(ctx context.Context, callID string, l Latency) error
	// SaveAnsweredBy records answering-machine detection's verdict (a
	// machine makes the call's outcome voicemail).
	SaveAnsweredBy(ctx context.Context, callID, answeredBy string, decision time.Duration) error
	// SaveTransfer records a transfer attempt (call.transferred or
	// call.transfer_failed).
	SaveTransfer(ctx context.Context, callID string, a TransferAttempt) error
}

// Agents reads an agent (the agents store).
type Agents interface {
	GetAgent(ctx context.Context, orgID, id string) (agentstore.Agent, error)
}

// Line is one line of a call's transcript.
type Line struct {
	Role        string // agent, user or tool
	Text        string
	At          time.Time
	Interrupted bool
}

// Metrics observes the loop (internal/metrics in serve; nil: none).
type Metrics interface {
	Turn(endpointing, transcribe, modelFirstToken, speechFirstByte, voiceToVoice time.Duration)
	BargeIn()
	CallEnded(reason string)
}

// Deps are what the loop uses.
type Deps struct {
	Calls      Calls
	Agents     Agents
	Engine     Engine
	STT        Transcriber
	TTS        Speaker
	Recordings Recordings // nil: never recorded
	Metrics    Metrics
	Log        *slog.Logger
}

// Budgets: how long a service may take before the caller hears a fallback
// sentence and the call ends with the service named. Never dead air.
const (
	STTBudget   = 5 * time.Second  // an utterance's transcript
	ModelBudget = 10 * time.Second // the answer's first words
	TTSBudget   = 4 * time.Second  // a sentence's first audio
	// DigitGap: DTMF digits pressed within it reach the model together.
	DigitGap = 1500 * time.Millisecond
	// DefaultEndpointing is the silence that ends the caller's turn.
	DefaultEndpointing = 600 * time.Millisecond
	// DefaultSilenceTimeout ends a call in which nobody speaks.
	DefaultSilenceTimeout = 30 * time.Second
	// goodbyeLead: the goodbye before the maximum duration starts this
	// early (a quarter of the call when shorter).
	goodbyeLead = 10 * time.Second
)

// Sentences said by agentd itself.
const (
	DefaultEndCallMessage = "I haven't heard from you, so I'll end the call now. Goodbye."
	fallbackSTT           = "I'm sorry, I'm having trouble hearing you right now. Please call back later. Goodbye."
	fallbackModel         = "I'm sorry, I'm having a technical problem right now. Please call back later. Goodbye."
)

// Reasons a call fails with (dial.TalkEnd.Reason).
const (
	ReasonSTT   = "speech-to-text service unavailable"
	ReasonTTS   = "text-to-speech service unavailable"
	ReasonModel = "model service unavailable"
	ReasonAgent = "voice agent unavailable"
)

// Config tunes the loop; zero values are the named defaults (tests
// shorten the budgets).
type Config struct {
	STTBudget, ModelBudget, TTSBudget time.Duration
	DigitGap                          time.Duration
}

// Service is the voice loop, a dial.Talker. Safe for concurrent calls.
type Service struct {
	d   Deps
	cfg Config
}

// New builds the loop.
func New(d Deps, cfg Config) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.STTBudget, STTBudget)
	def(&cfg.ModelBudget, ModelBudget)
	def(&cfg.TTSBudget, TTSBudget)
	def(&cfg.DigitGap, DigitGap)
	return &Service{d: d, cfg: cfg}
}

var _ dial.Talker = (*Service)(nil)
