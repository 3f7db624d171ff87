package voice

import (
	"context"
	"strings"
	"time"

	"github.com/agentd/agentd/app/voice/amd"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
)

// voicemailSettings is config.voicemail (app/agents validates it): its
// presence turns answering-machine detection on for outbound calls.
type voicemailSettings struct {
	Action  string `json:"action"` // hangup or leave_message
	Message string `json:"message"`
}

// Answering-machine detection's limits beyond the detector's own.
const (
	// greetingCheck: a person's greeting at least this long is
	// transcribed and checked for a machine's words before it is
	// believed (the detector's grey zone below its 2.4 s limit).
	greetingCheck = 1200 * time.Millisecond
	// afterGreeting: a machine that never beeps records once its greeting
	// has been quiet this long.
	afterGreeting = 1500 * time.Millisecond
	// beepWait bounds the wait for a machine's beep or the greeting's end.
	beepWait = 30 * time.Second
)

// detection is who answered, and what the caller said doing so.
type detection struct {
	dec      amd.Decision
	greeting []int16 // the person's first words, for the first turn
	text     string  // ... or their transcript, when it was made
	det      *amd.Detector
}

// detect listens to the first seconds of an outbound call until the
// detector decides; a person's longer greeting is transcribed and a
// machine's words in it make it a machine. false: the call ended.
func (c *call) detect(ctx context.Context) (detection, bool) {
	det := amd.New(amd.Config{})
	for {
		in, err := c.sess.Media.Read(ctx)
		if err != nil {
			return detection{}, false
		}
		if in.PCM == nil {
			continue // keys pressed while it answers: nothing to decide on
		}
		dec, ok := det.Push(in.PCM)
		if !ok {
			continue
		}
		d := detection{dec: dec, det: det}
		if dec.Verdict == amd.Human {
			d.greeting = append([]int16(nil), det.Greeting()...)
			if dec.Greeting >= greetingCheck {
				sctx, cancel := context.WithTimeout(ctx, c.s.cfg.STTBudget)
				text, err := c.s.d.STT.Transcribe(sctx, speech.TranscribeRequest{PCM: d.greeting, Language: c.language})
				cancel()
				if err == nil {
					d.text = strings.TrimSpace(text)
					if amd.MachinePhrase(d.text) {
						det.Override(amd.Machine, "machine's words")
						d.dec.Verdict, d.dec.Reason = amd.Machine, "machine's words"
						d.greeting = nil
					}
				}
			}
		}
		c.log.Info("answering-machine detection", "call", c.id, "answeredBy", d.dec.Verdict, "reason", d.dec.Reason,
			"at", d.dec.At, "greeting", d.dec.Greeting)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := c.s.d.Calls.SaveAnsweredBy(cctx, c.id, d.dec.Verdict, d.dec.At); err != nil {
			c.log.Warn("answered by", "call", c.id, "err", err)
		}
		cancel()
		return d, true
	}
}

// onMachine hangs up, or leaves the agent's message once the machine
// records: after its beep, or once its greeting has gone quiet.
func (c *call) onMachine(ctx context.Context, d detection) dial.TalkEnd {
	end := dial.TalkEnd{AnsweredBy: amd.Machine}
	vm := c.set.Voicemail
	c.transcribe(ctx, Line{Role: "tool", Text: "answering machine (" + d.dec.Reason + ")", At: time.Now()})
	if vm == nil || vm.Action != "leave_message" || vm.Message == "" {
		return end
	}
	wctx, cancel := context.WithTimeout(ctx, beepWait)
	defer cancel()
	for !(d.det.BeepEnded() && d.det.Silent() >= 100*time.Millisecond) && !(!d.det.BeepSeen() && d.det.Silent() >= afterGreeting) {
		in, err := c.sess.Media.Read(wctx)
		if err != nil {
			if ctx.Err() != nil {
				return end
			}
			break // no beep, no end of the greeting: say it anyway
		}
		if in.PCM != nil {
			d.det.Push(in.PCM)
		}
	}
	// The message is said as the agent's own sentence; the caller's
	// side is not listened to any more.
	t := c.start(ctx, turnIn{say: vm.Message})
	if out := <-t.done; out.reason != "" {
		end.Reason = out.reason
	}
	return end
}
