package voice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/app/calltransfer"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/voice/amd"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
)

// ToolTransferCall hands the caller to a person of the agent's
// config.transferDestinations (app/calltransfer, shared with the LiveKit
// calls the conversation engine transfers).
const ToolTransferCall = calltransfer.ToolName

// Transfer outcomes (the call record's transfers[].outcome).
const (
	TransferDone        = calltransfer.Done
	TransferNoAnswer    = calltransfer.NoAnswer
	TransferBusy        = calltransfer.Busy
	TransferMachine     = calltransfer.Machine
	TransferFailed      = calltransfer.Failed
	TransferUnsupported = calltransfer.Unsupported
)

// Destination is one of config.transferDestinations.
type Destination = calltransfer.Destination

// TransferAttempt is one transfer as the call record shows it.
type TransferAttempt = calltransfer.Attempt

// transferRequest is a transfer_call the model made.
type transferRequest struct {
	dest   Destination
	reason string
}

// transferTool is transfer_call with the agent's destinations, when it
// has some and the call can be transferred.
func (c *call) transferTool() (llm.Tool, bool) {
	if c.sess.Transfer == nil {
		return llm.Tool{}, false
	}
	return calltransfer.Tool(c.set.TransferDestinations)
}

// ParseTransfer reads transfer_call's arguments (calltransfer.Parse).
func ParseTransfer(arguments string, dests []Destination) (Destination, string, error) {
	return calltransfer.Parse(arguments, dests)
}

// transfer runs a transfer_call once its announcement has played. true:
// the caller was handed on and the agent's part of the call is over;
// false: it failed, the agent says so and the conversation goes on.
func (l *loop) transfer(req *transferRequest) bool {
	c, ctx := l.c, l.ctx
	d := req.dest
	att := TransferAttempt{Destination: d.Name, Mode: d.Mode, Reason: req.reason, At: time.Now().UTC()}
	if att.Mode == "" {
		att.Mode = "cold"
	}
	stop := drain(l.frames) // the caller's audio meanwhile goes nowhere (not into the bridge later)
	var leg dial.Leg
	var err error
	switch {
	case c.sess.Transfer == nil:
		att.Outcome = TransferUnsupported
	case att.Mode == "warm":
		att.Method = "bridge"
		leg, err = c.warmLeg(ctx, d, req.reason, &att)
	default:
		att.Method = "refer"
		err = c.sess.Transfer.Refer(ctx, d.Target())
		if err == nil {
			stop()
			c.settleTransfer(ctx, att, TransferDone, nil)
			return true
		}
		if errors.Is(err, dial.ErrReferRefused) {
			c.log.Info("transfer: REFER refused, bridging", "call", c.id, "err", err)
			att.Method = "bridge"
			leg, err = c.sess.Transfer.Dial(ctx, d.Target())
		}
	}
	if att.Outcome == "" && err == nil {
		stop()
		c.settleTransfer(ctx, att, TransferDone, nil)
		dial.Bridge(ctx, c.sess.Media, l.frames, leg.Media())
		leg.Hangup()
		return true
	}
	if att.Outcome == "" {
		att.Outcome = transferOutcome(err)
	}
	c.settleTransfer(ctx, att, att.Outcome, err)
	if ctx.Err() == nil { // said whole, the caller's audio still drained
		<-c.start(ctx, turnIn{say: transferSorry(d.Name, att.Outcome)}).done
	}
	stop()
	c.vad.reset()
	return false
}

// warmLeg calls the person, makes sure a person answered and briefs them
// (the caller does not hear it). The leg is returned ready to bridge.
func (c *call) warmLeg(ctx context.Context, d Destination, reason string, att *TransferAttempt) (dial.Leg, error) {
	leg, err := c.sess.Transfer.Dial(ctx, d.Target())
	if err != nil {
		return nil, err
	}
	det := amd.New(amd.Config{})
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	for {
		in, err := leg.Media().Read(dctx)
		if err != nil {
			break // nothing decided within 5 s: taken as a person who waits
		}
		if in.PCM == nil {
			continue
		}
		if dec, ok := det.Push(in.PCM); ok {
			if dec.Verdict == amd.Machine {
				cancel()
				leg.Hangup()
				att.Outcome = TransferMachine
				return nil, errors.New("an answering machine took the call")
			}
			break
		}
	}
	cancel()
	brief := c.briefing(reason)
	if err := c.speakTo(ctx, leg.Media(), brief); err != nil {
		leg.Hangup()
		return nil, err
	}
	att.Detail = "briefed: " + brief
	return leg, nil
}

// briefing is what the person taking a warm transfer hears first: who
// calls, why, and the caller's last words.
func (c *call) briefing(reason string) string {
	var b strings.Builder
	b.WriteString("Hello, this is the virtual agent with a caller for you")
	if c.lastUser != "" || reason != "" {
		b.WriteString(".")
	}
	if reason != "" {
		b.WriteString(" Reason: " + strings.TrimRight(reason, ".") + ".")
	}
	if c.lastUser != "" {
		b.WriteString(" The caller said: " + truncate(c.lastUser, 300))
		if !strings.HasSuffix(c.lastUser, ".") && !strings.HasSuffix(c.lastUser, "?") {
			b.WriteString(".")
		}
	}
	b.WriteString(" Connecting you now.")
	return b.String()
}

// speakTo says text on another call's media (a warm transfer's person)
// and waits until it has been sent.
func (c *call) speakTo(ctx context.Context, m dial.Media, text string) error {
	sctx, cancel := context.WithTimeout(ctx, c.s.cfg.TTSBudget+30*time.Second)
	defer cancel()
	st, err := c.s.d.TTS.Speak(sctx, speech.SpeakRequest{Text: text, Voice: c.voice, Speed: c.speed})
	if err != nil {
		return err
	}
	defer st.Close()
	out := &output{media: m}
	for {
		pcm, err := st.Next()
		if len(pcm) > 0 {
			if ok, werr := out.write(pcm); !ok {
				return werr
			}
		}
		if err != nil {
			break
		}
	}
	out.flush()
	for out.playing() {
		select {
		case <-sctx.Done():
			return sctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// settleTransfer records an attempt (call.transferred or
// call.transfer_failed), notes it on the transcript and for the model.
func (c *call) settleTransfer(ctx context.Context, att TransferAttempt, outcome string, err error) {
	att.Outcome = outcome
	if err != nil && att.Detail == "" {
		att.Detail = truncate(err.Error(), 300)
	}
	text := calltransfer.Note(att)
	c.transcribe(ctx, Line{Role: "tool", Text: text, At: time.Now()})
	c.notes = append(c.notes, text)
	c.log.Info("transfer", "call", c.id, "destination", att.Destination, "mode", att.Mode, "method", att.Method, "outcome", outcome, "err", err)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := c.s.d.Calls.SaveTransfer(cctx, c.id, att); err != nil {
		c.log.Warn("transfer record", "call", c.id, "err", err)
	}
}

func transferOutcome(err error) string { return calltransfer.Outcome(err) }

// transferSorry is what the caller hears when the transfer failed.
func transferSorry(name, outcome string) string {
	why := map[string]string{
		TransferNoAnswer:    "nobody answered",
		TransferBusy:        "the line is busy",
		TransferMachine:     "I only reached voicemail",
		TransferUnsupported: "transfers are not possible on this call",
	}[outcome]
	if why == "" {
		why = "the transfer did not go through"
	}
	return fmt.Sprintf("I'm sorry, I couldn't connect you to %s: %s. Is there anything else I can help you with?", name, why)
}

// drain empties the caller's frames until stop is called (the caller is
// waiting for a transfer; their audio then is nobody's).
func drain(frames <-chan dial.Input) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case _, ok := <-frames:
				if !ok {
					return
				}
			}
		}
	}()
	var stopped bool
	return func() {
		if !stopped {
			stopped = true
			close(quit)
			<-done
		}
	}
}
