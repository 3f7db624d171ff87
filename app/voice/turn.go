package voice

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
)

// turnIn is one turn to run: the caller's utterance to transcribe, text
// they typed on the keypad, or a sentence of agentd's own to say.
type turnIn struct {
	pcm         []int16
	text        string // known words (keypad), used as they are
	prefix      string // the caller's words of a turn cut short before it was answered
	say         string // said as it is, no model (first message, goodbye)
	speechEnd   time.Time
	endpointing time.Duration
}

// turnOut is how a turn ended.
type turnOut struct {
	endCall bool   // the model called end_call and its goodbye played
	reason  string // a service failed (its fallback sentence was said)
	// carry: nothing was answered (cut short before the agent spoke, or
	// nothing heard): its words or audio go before the next utterance.
	carry     bool
	carryText string
	carryPCM  []int16
	latency   *TurnLatency
	transfer  *transferRequest // the model called transfer_call
}

// turn is a running turn; the loop cancels it on barge-in.
type turn struct {
	in     turnIn
	ctx    context.Context
	cancel context.CancelFunc
	done   chan turnOut
	barged atomic.Bool
	sent   atomic.Int64 // samples sent when it was interrupted
}

var errModelSlow = errors.New("model: no answer within its budget")

// start runs a turn in its own goroutine.
func (c *call) start(ctx context.Context, in turnIn) *turn {
	t := &turn{in: in, done: make(chan turnOut, 1)}
	t.ctx, t.cancel = context.WithCancel(ctx)
	go func() {
		defer t.cancel()
		t.done <- c.runTurn(t)
	}()
	return t
}

func (c *call) runTurn(t *turn) turnOut {
	ctx, in := t.ctx, t.in
	if in.say != "" {
		spoken, cut, err := c.say(ctx, t, in.say)
		c.keep(ctx, "", conversations.VoiceAnswer{}, spoken, cut && t.barged.Load(), nil)
		if err != nil && ctx.Err() == nil {
			return turnOut{reason: ReasonTTS}
		}
		return turnOut{}
	}
	lat := TurnLatency{EndpointingMs: ms(in.endpointing)}
	words := in.text
	if in.pcm != nil {
		start := time.Now()
		sctx, cancel := context.WithTimeout(ctx, c.s.cfg.STTBudget)
		text, err := c.s.d.STT.Transcribe(sctx, speech.TranscribeRequest{PCM: in.pcm, Language: c.language})
		cancel()
		switch {
		case ctx.Err() != nil:
			return turnOut{carry: true, carryText: in.prefix, carryPCM: in.pcm}
		case err != nil:
			c.log.Warn("speech-to-text failed", "call", c.id, "err", err)
			return c.fail(t, ReasonSTT, fallbackSTT)
		}
		lat.TranscribeMs = ms(time.Since(start))
		words = strings.TrimSpace(text)
	}
	user := strings.TrimSpace(in.prefix + " " + words)
	if words == "" {
		return turnOut{carry: true, carryText: user}
	}
	c.transcribe(ctx, Line{Role: "user", Text: words, At: in.speechEnd})

	// The answer: sentences go to speech as the model streams them.
	sentences := make(chan string, 64)
	spoke := make(chan spoken, 1)
	go func() { spoke <- c.speak(ctx, t, sentences) }()
	mctx, mcancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(c.s.cfg.ModelBudget, func() { mcancel(errModelSlow) })
	var sp splitter
	var first time.Time
	mstart := time.Now()
	ans, err := c.s.d.Engine.AnswerVoice(mctx, c.org, c.conv, conversations.VoiceInput{Content: user, Context: c.takeNotes(), Tools: c.voiceTools()},
		func(d string) {
			if first.IsZero() && strings.TrimSpace(d) != "" {
				first = time.Now()
				timer.Stop()
			}
			for _, s := range sp.push(d) {
				sentences <- s
			}
		})
	timer.Stop()
	mcancel(nil)
	if err == nil {
		for _, s := range sp.flush() {
			sentences <- s
		}
	}
	close(sentences)
	res := <-spoke
	if res.err == nil && err == nil {
		res.err = c.waitPlayed(ctx)
	}
	if !first.IsZero() {
		lat.ModelFirstTokenMs = ms(first.Sub(mstart))
	}
	barged := t.barged.Load()
	sent := c.out.offset()
	if barged {
		sent = t.sent.Load()
	}
	text, cut := heard(res.spans, sent)
	switch {
	case barged && text == "" && len(ans.ToolCalls) == 0 && len(ans.Pending) == 0:
		// Cut short before a word was heard: the caller goes on.
		return turnOut{carry: true, carryText: user}
	case err != nil && ctx.Err() == nil:
		c.keep(ctx, user, ans, text, false, ans.ToolCalls)
		c.log.Warn("model failed", "call", c.id, "err", err)
		return c.fail(t, ReasonModel, fallbackModel)
	case res.err != nil && ctx.Err() == nil:
		c.keep(ctx, user, ans, text, false, ans.ToolCalls)
		c.log.Warn("text-to-speech failed", "call", c.id, "err", res.err)
		return c.fail(t, ReasonTTS, fallbackModel)
	}
	c.lastUser = user
	tr := c.runPending(ctx, &ans, barged)
	c.keep(ctx, user, ans, text, cut && barged, ans.ToolCalls)
	out := turnOut{endCall: ans.EndCall && !barged, transfer: tr}
	if !res.firstAudio.IsZero() && !in.speechEnd.IsZero() {
		lat.SpeechFirstByteMs = ms(res.firstByte)
		lat.VoiceToVoiceMs = ms(res.firstAudio.Sub(in.speechEnd))
		out.latency = &lat
	}
	return out
}

// keep records a turn: the tools agentd ran and what the caller heard of
// the answer on the call's transcript, and the turn in the conversation.
// It outlives the turn's context (a barge-in cancels it).
func (c *call) keep(ctx context.Context, user string, ans conversations.VoiceAnswer, spoken string, interrupted bool, tools []conversations.ToolCall) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	now := time.Now()
	var lines []Line
	for _, tc := range tools {
		lines = append(lines, Line{Role: "tool", Text: tc.Name + " " + tc.Arguments, At: now})
	}
	if ans.EndCall {
		lines = append(lines, Line{Role: "tool", Text: conversations.ToolEndCall, At: now})
	}
	if spoken != "" {
		lines = append(lines, Line{Role: "agent", Text: spoken, At: now, Interrupted: interrupted})
	}
	if len(lines) > 0 {
		c.transcribe(kctx, lines...)
	}
	if err := c.s.d.Engine.StoreVoiceTurn(kctx, c.org, c.conv, user, ans, spoken); err != nil {
		c.log.Warn("storing a voice turn", "call", c.id, "err", err)
	}
}

// transcribe queues lines for the call's transcript: a writer of its own
// keeps their order and the database off the answer's critical path.
func (c *call) transcribe(_ context.Context, lines ...Line) {
	c.lines <- lines
	if w := c.sess.Watch; w != nil {
		for _, l := range lines {
			w(dial.TalkEvent{Role: l.Role, Text: l.Text, Interrupted: l.Interrupted})
		}
	}
}

// writeTranscript appends the queued lines until the queue closes.
func (c *call) writeTranscript(ctx context.Context) {
	defer close(c.written)
	for lines := range c.lines {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := c.s.d.Calls.AppendTranscript(wctx, c.org, c.agentID, c.id, lines); err != nil {
			c.log.Warn("call transcript", "call", c.id, "err", err)
		}
		cancel()
	}
}

// fail says the fallback sentence (if speech still works) and ends the
// call with the failed service named.
func (c *call) fail(t *turn, reason, sentence string) turnOut {
	if t.ctx.Err() != nil {
		return turnOut{}
	}
	spoken, _, err := c.say(t.ctx, t, sentence)
	if err == nil {
		c.transcribe(t.ctx, Line{Role: "agent", Text: spoken, At: time.Now()})
	}
	return turnOut{reason: reason}
}

// say speaks text as it is and waits until it has played.
func (c *call) say(ctx context.Context, t *turn, text string) (spokenText string, cut bool, err error) {
	var sp splitter
	ss := append(sp.push(text), sp.flush()...)
	sentences := make(chan string, len(ss))
	for _, s := range ss {
		sentences <- s
	}
	close(sentences)
	res := c.speak(ctx, t, sentences)
	if res.err == nil {
		res.err = c.waitPlayed(ctx)
	}
	sent := c.out.offset()
	if t.barged.Load() {
		sent = t.sent.Load()
	}
	spokenText, cut = heard(res.spans, sent)
	return spokenText, cut, res.err
}

// spoken is what a turn's speech queued.
type spoken struct {
	spans      []span
	firstByte  time.Duration // the first sentence's request to its first audio
	firstAudio time.Time     // the first audio queued
	err        error         // text-to-speech failed
}

// speak turns each sentence into speech and queues it, in order, until
// the channel closes; after a failure or a barge-in it drains the rest.
func (c *call) speak(ctx context.Context, t *turn, sentences <-chan string) spoken {
	var res spoken
	for s := range sentences {
		if res.err != nil || ctx.Err() != nil {
			continue
		}
		start := time.Now()
		from := c.out.offset()
		n, err := c.speakOne(ctx, s, func() {
			if res.firstAudio.IsZero() {
				res.firstAudio, res.firstByte = time.Now(), time.Since(start)
			}
		})
		c.out.flush()
		if n > 0 {
			res.spans = append(res.spans, span{text: s, start: from, end: c.out.offset()})
		}
		if err != nil && ctx.Err() == nil {
			res.err = err
		}
	}
	return res
}

// speakOne queues one sentence's speech; first is called at its first
// audio. The first audio must come within the TTS budget.
func (c *call) speakOne(ctx context.Context, text string, first func()) (int, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := time.AfterFunc(c.s.cfg.TTSBudget, cancel)
	defer budget.Stop()
	st, err := c.s.d.TTS.Speak(sctx, speech.SpeakRequest{Text: text, Voice: c.voice, Speed: c.speed})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	n := 0
	for {
		pcm, err := st.Next()
		if len(pcm) > 0 {
			if n == 0 {
				budget.Stop()
				first()
			}
			if ok, err := c.out.write(pcm); !ok {
				return n, err
			}
			n += len(pcm)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			if n == 0 && err == nil {
				err = errors.New("text-to-speech: no audio")
			}
			if sctx.Err() != nil && ctx.Err() == nil {
				err = errors.New("text-to-speech: no audio within its budget")
			}
			return n, err
		}
	}
}

// waitPlayed waits until the queued audio has been sent.
func (c *call) waitPlayed(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for c.out.playing() {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	return nil
}
