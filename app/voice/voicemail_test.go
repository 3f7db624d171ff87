package voice

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/storage/callstore"
)

const machineGreeting = "Hi, you have reached John Smith. I am not available right now, please leave a message after the tone."

// A machine answers an agent whose voicemail action is hangup: the agent
// says nothing and hangs up; the call records answeredBy machine and the
// outcome voicemail.
func TestVoicemailHangsUp(t *testing.T) {
	r := newRig(t, map[string]any{"firstMessage": "Hello, this is Ada.", "voicemail": map[string]any{"action": "hangup"}}, nil)
	done := r.start()
	r.media.say(voiceOf(t, machineGreeting))
	start := time.Now()
	end := r.end(done, 10*time.Second)
	if end.AnsweredBy != callstore.AnsweredMachine || end.Reason != "" || time.Since(start) > 5*time.Second {
		t.Errorf("ended %+v after %v", end, time.Since(start))
	}
	if bs := bursts(r.media.agentLog()); len(bs) != 0 {
		t.Errorf("the agent spoke to the machine: %v", bs)
	}
	c, ok, err := r.db.Calls.GetCallControl(context.Background(), r.call)
	if err != nil || !ok || c.AnsweredBy != "machine" || c.DecisionMs < 2000 || c.DecisionMs > 4000 {
		t.Errorf("call control %+v %v %v", c, ok, err)
	}
	res, err := r.db.Calls.GetCallResult(context.Background(), r.call)
	if err != nil || res.Outcome == nil || *res.Outcome != callstore.OutcomeVoicemail {
		t.Errorf("result %+v %v: want outcome voicemail", res, err)
	}
	if tr := lines(r.transcript()); !strings.Contains(tr, "tool: answering machine (long greeting)") {
		t.Errorf("transcript:\n%s", tr)
	}
}

// leave_message: the message starts after the machine's beep has ended,
// and is the whole transcript's last line.
func TestVoicemailLeavesMessageAfterBeep(t *testing.T) {
	msg := "Hi John, this is Ada from the bakery. Your cake is ready. Goodbye."
	r := newRig(t, map[string]any{"firstMessage": "Hello, this is Ada.", "voicemail": map[string]any{"action": "leave_message", "message": msg}}, nil)
	done := r.start()
	greeting := voiceOf(t, machineGreeting)
	r.media.say(greeting)
	r.media.say(make([]int16, 4000)) // 500 ms
	r.media.say(speechtest.Tone(1400, 600*time.Millisecond, dial.SampleRate))
	end := r.end(done, 30*time.Second)
	if end.AnsweredBy != "machine" || end.Reason != "" {
		t.Errorf("ended %+v", end)
	}
	// The beep's last tick on the caller's side; the message's first.
	beepEnd := -1
	for i, f := range r.media.callerLog() {
		if rms(f) > 3000 && i*dial.FrameSamples > len(greeting) {
			beepEnd = i
		}
	}
	bs := bursts(r.media.agentLog())
	if beepEnd < 0 || len(bs) != 1 || bs[0][0] <= beepEnd || bs[0][0] > beepEnd+25 {
		t.Fatalf("beep ended at tick %d, agent audio %v: want the message within 500 ms after it", beepEnd, bs)
	}
	if want := len(strings.Fields(msg)) * wordSamples / dial.FrameSamples; bs[0][1]-bs[0][0]+1 < want {
		t.Errorf("message %v ticks, want %d", bs[0], want)
	}
	tr := r.transcript()
	if len(tr) == 0 || tr[len(tr)-1].Text != msg {
		t.Errorf("transcript:\n%s", lines(tr))
	}
}

// A person's "Hello?": answeredBy human, then the first message.
func TestVoicemailHumanHearsFirstMessage(t *testing.T) {
	r := newRig(t, map[string]any{"firstMessage": "Hello, this is Ada.", "voicemail": map[string]any{"action": "hangup"}}, nil)
	r.start()
	r.media.say(voiceOf(t, "Hello?"))
	waitFor(t, 10*time.Second, "the first message", func() bool { return len(bursts(r.media.agentLog())) == 1 })
	c, ok, _ := r.db.Calls.GetCallControl(context.Background(), r.call)
	if !ok || c.AnsweredBy != "human" || c.DecisionMs > 2500 {
		t.Errorf("call control %+v", c)
	}
	if _, err := r.db.Calls.GetCallResult(context.Background(), r.call); err == nil {
		t.Errorf("a person's call has a result outcome")
	}
}

// A short greeting with a machine's words: the audio alone says a person;
// its transcript says a machine.
func TestVoicemailWordsMakeAMachine(t *testing.T) {
	r := newRig(t, map[string]any{"firstMessage": "Hello, this is Ada.", "voicemail": map[string]any{"action": "hangup"}}, nil)
	r.texts("Hello, you have reached Sam Miller.")
	done := r.start()
	r.media.say(voiceOf(t, "Hello, you have reached Sam Miller."))
	end := r.end(done, 10*time.Second)
	if end.AnsweredBy != "machine" {
		t.Errorf("ended %+v", end)
	}
	if tr := lines(r.transcript()); !strings.Contains(tr, "answering machine (machine's words)") {
		t.Errorf("transcript:\n%s", tr)
	}
	if h := r.speech.Heard(); len(h) != 1 {
		t.Errorf("speech-to-text got %d requests, want the greeting", len(h))
	}
}
