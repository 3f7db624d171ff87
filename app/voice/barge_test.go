package voice

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

const longGreeting = "Hello, this is Ada from the bakery on Main Street. We have fresh bread, cakes and pastries every morning from seven. " +
	"Today we also have a special offer on birthday cakes. How can I help you?"

// crossing replays the loop's detector over the caller's audio as it was
// delivered: the tick at which barge-in's threshold was crossed (-1: never).
func crossing(caller [][]int16, threshold float64) int {
	v := newVAD(DefaultEndpointing, threshold)
	for i, f := range caller {
		if v.push(f).barged {
			return i
		}
	}
	return -1
}

// Caller speech over the agent stops its audio within 300 ms of the
// threshold being crossed (measured on the frames the transport sent);
// the transcript keeps what was heard, marked interrupted; the caller's
// words are answered.
func TestBargeIn(t *testing.T) {
	const threshold = 0.3
	r := newRig(t, map[string]any{"firstMessage": longGreeting, "interruptionThreshold": threshold}, nil)
	r.texts("Sorry, I need a large chocolate cake for Saturday.")
	r.model.Push(llmtest.Reply{Content: "Sure, a large chocolate cake for Saturday."})
	r.start()
	waitFor(t, 10*time.Second, "the first message to play a while", func() bool {
		bs := bursts(r.media.agentLog())
		return len(bs) == 1 && bs[0][1]-bs[0][0] > 50
	})
	r.media.say(voiceOf(t, "Sorry, I need a large chocolate cake for Saturday."))
	waitFor(t, 15*time.Second, "the answer", func() bool { return len(r.transcript()) >= 3 })

	cross := crossing(r.media.callerLog(), threshold)
	if cross < 0 {
		t.Fatal("the caller's speech never crossed the threshold")
	}
	bs := bursts(r.media.agentLog())
	stopped := bs[0][1]
	if lag := time.Duration(stopped-cross) * dial.FrameDuration; lag > 300*time.Millisecond || lag < 0 {
		t.Errorf("the agent's audio stopped %s after the threshold was crossed (tick %d, last agent frame %d)", lag, cross, stopped)
	}
	t.Logf("threshold crossed at tick %d, agent audio stopped at tick %d", cross, stopped)
	full := len(strings.Fields(longGreeting)) * wordSamples / dial.FrameSamples
	if played := bs[0][1] - bs[0][0]; played >= full-10 {
		t.Errorf("the first message played %d of %d frames: not interrupted", played, full)
	}
	tr := r.transcript()
	if !tr[0].Interrupted || tr[0].Role != "agent" || !strings.HasPrefix(longGreeting, tr[0].Text) || len(tr[0].Text) >= len(longGreeting) {
		t.Errorf("first line %+v: want the part heard of the greeting, interrupted", tr[0])
	}
	if tr[1].Role != "user" || tr[2].Text != "Sure, a large chocolate cake for Saturday." || tr[2].Interrupted {
		t.Errorf("transcript:\n%s", lines(tr))
	}
	// The model knows what the caller heard, not what was generated.
	if all := r.model.Last().All(); !strings.Contains(all, tr[0].Text) || strings.Contains(all, "How can I help you?") {
		t.Errorf("the model's request:\n%s", all)
	}
}

// A cough (150 ms) over the agent is below the default threshold: the
// agent goes on and nothing goes to speech-to-text.
func TestCoughDoesNotInterrupt(t *testing.T) {
	r := newRig(t, map[string]any{"firstMessage": longGreeting}, nil)
	r.start()
	waitFor(t, 10*time.Second, "the first message to play a while", func() bool {
		bs := bursts(r.media.agentLog())
		return len(bs) == 1 && bs[0][1]-bs[0][0] > 50
	})
	r.media.say(cough(150 * time.Millisecond))
	waitFor(t, 20*time.Second, "the first message to end", func() bool { return len(r.transcript()) >= 1 })
	tr := r.transcript()
	if tr[0].Interrupted || tr[0].Text != longGreeting {
		t.Errorf("transcript:\n%s", lines(tr))
	}
	full := len(strings.Fields(longGreeting)) * wordSamples
	if sent := r.media.Sent(); sent < int64(full) {
		t.Errorf("sent %d samples of %d", sent, full)
	}
	if n := len(r.speech.Heard()); n != 0 {
		t.Errorf("%d speech-to-text requests for a cough", n)
	}
	if r.media.clears != 0 {
		t.Error("the agent's audio was cleared")
	}
	// The same cough is enough at threshold 0.
	if cross := crossing([][]int16{}, 0); cross != -1 {
		t.Fatal(cross)
	}
	quiet := make([][]int16, 20)
	for i := range quiet {
		quiet[i] = make([]int16, dial.FrameSamples)
	}
	c := cough(150 * time.Millisecond)
	for i := 0; i+dial.FrameSamples <= len(c); i += dial.FrameSamples {
		quiet = append(quiet, c[i:i+dial.FrameSamples])
	}
	if crossing(quiet, 0) < 0 || crossing(quiet, DefaultInterruptions) >= 0 {
		t.Error("a 150 ms cough: want barge-in at threshold 0, none at the default")
	}
}
