package voice

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

const greeting = "Hello, this is Ada from the bakery. How can I help?"

// feedAfterQuiet waits until the agent has been silent for a while, then
// feeds the caller's speech; it returns the tick the speech starts at.
func (r *rig) sayWhenQuiet(pcm []int16) int64 {
	r.t.Helper()
	waitFor(r.t, 10*time.Second, "the agent to be quiet", func() bool {
		log := r.media.agentLog()
		n := len(log)
		if n < 15 {
			return false
		}
		for _, e := range log[n-15:] {
			if e != 0 {
				return false
			}
		}
		return true
	})
	start := r.media.now()
	r.media.say(pcm)
	return start
}

// The phone hears the first message, then the answer to what the caller
// said, in that order; the transcript holds both sides; the call's own
// data reaches the model and its language the speech-to-text.
func TestFirstMessageThenAnswer(t *testing.T) {
	r := newRig(t, map[string]any{"firstMessage": greeting, "voice": "nova", "speed": 1.25},
		map[string]any{"firstName": "Grace", "callPurpose": "cake order follow-up", "preferredLanguage": "fr"})
	r.texts("I would like to order a cake.")
	r.model.Push(llmtest.Reply{Content: "Of course, Grace. What size would you like? We have small and large cakes."})
	r.start()
	caller := voiceOf(t, "I would like to order a cake.")
	waitFor(t, 10*time.Second, "the first message", func() bool { return len(bursts(r.media.agentLog())) >= 1 })
	from := r.sayWhenQuiet(caller)
	waitFor(t, 15*time.Second, "the answer", func() bool {
		return len(r.transcript()) >= 3 && len(bursts(r.media.agentLog())) >= 2
	})
	bs := bursts(r.media.agentLog())
	if bs[0][1] >= int(from) {
		t.Errorf("the first message played until tick %d, after the caller began at %d", bs[0][1], from)
	}
	speechEnd := int(from) + len(caller)/dial.FrameSamples
	if bs[1][0] <= speechEnd {
		t.Errorf("the answer began at tick %d, before the caller stopped at %d", bs[1][0], speechEnd)
	}
	got := lines(r.transcript())
	want := "agent: " + greeting + "\nuser: I would like to order a cake.\nagent: Of course, Grace. What size would you like? We have small and large cakes.\n"
	if got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	rows, err := r.db.Calls.Transcript(context.Background(), r.call)
	if err != nil {
		t.Fatal(err)
	}
	var kept strings.Builder
	for _, l := range rows {
		kept.WriteString(l.Role + ": " + l.Text + "\n")
	}
	if kept.String() != want {
		t.Errorf("the call's transcript rows:\n%s\nwant:\n%s", kept.String(), want)
	}
	if tx := r.spoken(); !slices.Equal(tx, []string{"Hello, this is Ada from the bakery.", "How can I help?",
		"Of course, Grace.", "What size would you like?", "We have small and large cakes."}) {
		t.Errorf("spoken sentence by sentence: %q", tx)
	}
	if req := r.speech.Spoken()[0]; req.Voice != "nova" || req.Speed != 1.25 {
		t.Errorf("tts request %+v: want the agent's voice and speed", req)
	}
	if reqs := r.speech.Heard(); len(reqs) != 1 || reqs[0].Language != "fr" {
		t.Errorf("stt requests %+v: want one, language fr", reqs)
	}
	all := r.model.Last().All()
	for _, s := range []string{"Grace", "cake order follow-up", "You are Ada", "You opened the call by saying: \"" + greeting, "user: I would like to order a cake."} {
		if !strings.Contains(all, s) {
			t.Errorf("the model's request lacks %q:\n%s", s, all)
		}
	}
	if tools := r.model.Last().ToolNames(); !slices.Contains(tools, "end_call") {
		t.Errorf("tools offered %v: want end_call", tools)
	}
}

// Without a first message the agent waits for the caller.
func TestNoFirstMessageWaits(t *testing.T) {
	r := newRig(t, nil, nil)
	r.texts("Hello?")
	r.model.Push(llmtest.Reply{Content: "Hi, this is Ada."})
	r.start()
	testkit.Never(t, 600*time.Millisecond, func() bool { return len(bursts(r.media.agentLog())) != 0 }, "the agent spoke first")
	r.media.say(voiceOf(t, "Hello?"))
	waitFor(t, 10*time.Second, "the answer", func() bool { return len(bursts(r.media.agentLog())) == 1 })
}
