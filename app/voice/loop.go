package voice

import (
	"context"
	"strings"
	"time"

	"github.com/agentd/agentd/dial"
)

// loop is the state of a call's main loop, which alone reads the caller's
// audio and decides: turns run beside it and report when done.
type loop struct {
	c         *call
	ctx       context.Context
	cur       *turn // the running turn, nil when the agent is idle
	utterBusy bool  // the caller's utterance began while a turn ran
	barged    bool  // ... and it interrupted the agent
	carryText string
	carryPCM  []int16
	ending    bool   // the last turn (a goodbye) is running
	reason    string // the call's failure reason once ending
	frames    <-chan dial.Input
}

// run is the call's main loop: it returns when the agent ends the call
// or ctx ends (the far end hung up).
// d is answering-machine detection's verdict on a person (or unknown):
// without a first message, the agent answers their greeting.
func (c *call) run(ctx context.Context, d detection) dial.TalkEnd {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	frames := make(chan dial.Input, 256)
	go func() {
		defer close(frames)
		for {
			in, err := c.sess.Media.Read(rctx)
			if err != nil {
				return
			}
			select {
			case frames <- in:
			case <-rctx.Done():
				return
			}
		}
	}()
	l := &loop{c: c, ctx: ctx, frames: frames}
	silenceAfter := DefaultSilenceTimeout
	if c.set.SilenceTimeoutSeconds > 0 {
		silenceAfter = time.Duration(c.set.SilenceTimeoutSeconds) * time.Second
	}
	silence := time.NewTimer(silenceAfter)
	defer silence.Stop()
	var maxC <-chan time.Time
	if d := c.sess.MaxDuration; d > 0 {
		lead := min(goodbyeLead, d/4)
		t := time.NewTimer(d - lead)
		defer t.Stop()
		maxC = t.C
	}
	digitTimer := time.NewTimer(time.Hour)
	digitTimer.Stop()
	defer digitTimer.Stop()
	var digits []string
	var lastSpeech time.Time

	switch {
	case c.set.FirstMessage != "":
		l.cur = c.start(ctx, turnIn{say: c.set.FirstMessage})
	case d.text != "":
		l.cur = c.start(ctx, turnIn{text: d.text, speechEnd: time.Now()})
	case len(d.greeting) > 0:
		l.cur = c.start(ctx, turnIn{pcm: d.greeting, speechEnd: time.Now()})
	}
	for {
		var done <-chan turnOut
		if l.cur != nil {
			done = l.cur.done
		}
		select {
		case <-ctx.Done():
			l.stop()
			return dial.TalkEnd{}
		case in, ok := <-frames:
			if !ok { // the call's media ended
				l.stop()
				return dial.TalkEnd{}
			}
			if l.ending {
				continue
			}
			if in.PCM == nil {
				if in.Digit != 0 {
					digits = append(digits, string(in.Digit))
					digitTimer.Reset(c.s.cfg.DigitGap)
				}
				continue
			}
			ev := c.vad.push(in.PCM)
			now := time.Now()
			if ev.speech {
				lastSpeech = now
				silence.Reset(silenceAfter)
			}
			if ev.started {
				l.utterBusy, l.barged = l.cur != nil, false
			}
			if ev.barged && l.cur != nil && c.vad.speaking {
				l.bargeIn()
			}
			if ev.ended == nil {
				continue
			}
			if l.utterBusy && !l.barged && l.cur != nil {
				continue // a cough or a word over the agent: below the threshold
			}
			if end, over := l.wait(); over {
				return end
			}
			pcm := append(l.carryPCM, ev.ended...)
			l.cur = c.start(ctx, turnIn{pcm: pcm, prefix: l.carryText, speechEnd: lastSpeech, endpointing: now.Sub(lastSpeech)})
			l.carryText, l.carryPCM = "", nil
		case out := <-done:
			l.cur = nil
			if end, over := l.settle(out); over {
				return end
			}
			silence.Reset(silenceAfter)
		case <-digitTimer.C:
			if l.ending || len(digits) == 0 {
				continue
			}
			text := "[keypad: " + strings.Join(digits, " ") + "]"
			digits = nil
			if l.cur != nil {
				l.bargeIn()
			}
			if end, over := l.wait(); over {
				return end
			}
			l.cur = c.start(ctx, turnIn{text: text, prefix: l.carryText})
			l.carryText, l.carryPCM = "", nil
		case <-silence.C:
			if l.ending {
				continue
			}
			if l.cur != nil || c.vad.speaking {
				silence.Reset(silenceAfter)
				continue
			}
			l.goodbye()
		case <-maxC:
			if l.ending {
				continue
			}
			if l.cur != nil {
				l.bargeIn()
				if end, over := l.wait(); over {
					return end
				}
			}
			l.goodbye()
		}
	}
}

// bargeIn stops the agent's audio at once and cancels its turn.
func (l *loop) bargeIn() {
	t := l.cur
	if t.barged.Load() {
		return
	}
	t.sent.Store(l.c.out.interrupt())
	t.barged.Store(true)
	t.cancel()
	l.barged = true
	if m := l.c.s.d.Metrics; m != nil {
		m.BargeIn()
	}
}

// wait lets the running turn finish (after a barge-in it is quick).
func (l *loop) wait() (dial.TalkEnd, bool) {
	if l.cur == nil {
		return dial.TalkEnd{}, false
	}
	out := <-l.cur.done
	l.cur = nil
	return l.settle(out)
}

// settle takes a finished turn's outcome: true when the call is over.
func (l *loop) settle(out turnOut) (dial.TalkEnd, bool) {
	l.c.out.unmute()
	if out.latency != nil {
		l.c.turns = append(l.c.turns, *out.latency)
		if w := l.c.sess.Watch; w != nil {
			t := dial.TurnLatency(*out.latency)
			w(dial.TalkEvent{Latency: &t})
		}
		if m := l.c.s.d.Metrics; m != nil {
			t := out.latency
			d := func(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
			m.Turn(d(t.EndpointingMs), d(t.TranscribeMs), d(t.ModelFirstTokenMs), d(t.SpeechFirstByteMs), d(t.VoiceToVoiceMs))
		}
	}
	switch {
	case l.ending:
		return dial.TalkEnd{Reason: l.reason}, true
	case out.reason != "":
		return dial.TalkEnd{Reason: out.reason}, true
	case out.transfer != nil:
		if l.transfer(out.transfer) {
			return dial.TalkEnd{}, true
		}
		return dial.TalkEnd{}, false
	case out.endCall:
		return dial.TalkEnd{}, true
	}
	if out.carry {
		l.carryText = strings.TrimSpace(l.carryText + " " + out.carryText)
		l.carryPCM = append(l.carryPCM, out.carryPCM...)
	}
	return dial.TalkEnd{}, false
}

// goodbye says the end-of-call sentence; the call ends once it played.
func (l *loop) goodbye() {
	msg := l.c.set.EndCallMessage
	if msg == "" {
		msg = DefaultEndCallMessage
	}
	l.ending = true
	l.c.vad.reset()
	l.cur = l.c.start(l.ctx, turnIn{say: msg})
}

// stop cancels the running turn and waits for it (the call is over).
func (l *loop) stop() {
	if l.cur != nil {
		l.cur.cancel()
		<-l.cur.done
		l.cur = nil
	}
}
