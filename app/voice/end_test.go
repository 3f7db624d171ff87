package voice

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
)

// Digits pressed together reach the model as one keypad message.
func TestDTMFReachesModel(t *testing.T) {
	r := newRig(t, nil, nil)
	r.model.Push(llmtest.Reply{Content: "You chose option one."})
	r.start()
	r.media.press("12#")
	waitFor(t, 10*time.Second, "the answer", func() bool { return len(r.transcript()) >= 2 })
	if got := r.model.Last(); !strings.Contains(got.All(), "user: [keypad: 1 2 #]") {
		t.Errorf("the model got:\n%s", got.All())
	}
	if tr := r.transcript(); tr[0].Role != "user" || tr[0].Text != "[keypad: 1 2 #]" {
		t.Errorf("transcript:\n%s", lines(tr))
	}
}

// The model's end_call hangs up once its goodbye has played.
func TestEndCallHangsUp(t *testing.T) {
	r := newRig(t, nil, nil)
	r.texts("That's all, thank you.")
	r.model.Push(llmtest.Reply{Content: "You're welcome. Goodbye!",
		ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "end_call", Arguments: "{}"}}})
	done := r.start()
	r.media.say(voiceOf(t, "That's all, thank you."))
	end := r.end(done, 15*time.Second)
	if end.Reason != "" {
		t.Errorf("reason %q", end.Reason)
	}
	want := int64(len(strings.Fields("You're welcome. Goodbye!")) * wordSamples)
	if sent := r.media.Sent(); sent < want {
		t.Errorf("hung up after %d samples of the goodbye's %d", sent, want)
	}
	tr := lines(r.transcript())
	if !strings.Contains(tr, "tool: end_call\nagent: You're welcome. Goodbye!\n") {
		t.Errorf("transcript:\n%s", tr)
	}
	// The turn's latency is on the call's record.
	l, ok, err := r.db.Calls.GetCallLatency(context.Background(), r.call)
	if err != nil || !ok {
		t.Fatalf("latency: %v %v", ok, err)
	}
	var turns []TurnLatency
	json.Unmarshal(l.Turns, &turns)
	if len(turns) != 1 {
		t.Fatalf("latency turns %s", l.Turns)
	}
	lt := turns[0]
	if lt.EndpointingMs < 500 || lt.EndpointingMs > 800 || lt.VoiceToVoiceMs < lt.EndpointingMs+lt.TranscribeMs+lt.ModelFirstTokenMs ||
		l.P50Ms != lt.VoiceToVoiceMs || l.P95Ms != lt.VoiceToVoiceMs {
		t.Errorf("latency %+v p50 %d p95 %d", lt, l.P50Ms, l.P95Ms)
	}
	t.Logf("latency %+v", lt)
}

// Nobody speaking for silenceTimeoutSeconds: the agent says goodbye and
// hangs up, without a failure.
func TestSilenceTimeoutSaysGoodbye(t *testing.T) {
	if testing.Short() {
		t.Skip("5 s of silence")
	}
	r := newRig(t, map[string]any{"silenceTimeoutSeconds": 5}, nil)
	done := r.start()
	start := time.Now()
	end := r.end(done, 15*time.Second)
	if end.Reason != "" {
		t.Errorf("reason %q", end.Reason)
	}
	if d := time.Since(start); d < 5*time.Second {
		t.Errorf("ended after %s", d)
	}
	if tr := r.transcript(); len(tr) != 1 || tr[0].Text != DefaultEndCallMessage {
		t.Errorf("transcript:\n%s", lines(tr))
	}
	if bs := bursts(r.media.agentLog()); len(bs) != 1 {
		t.Errorf("agent audio %v: want the goodbye", bs)
	}
}

// The call's maximum duration: the agent's own goodbye before it.
func TestMaxDurationSaysGoodbye(t *testing.T) {
	r := newRig(t, map[string]any{"endCallMessage": "Our time is up. Goodbye."}, nil)
	r.maxDur = 3 * time.Second
	done := r.start()
	start := time.Now()
	end := r.end(done, 10*time.Second)
	if end.Reason != "" || time.Since(start) > r.maxDur+time.Second {
		t.Errorf("ended %+v after %s", end, time.Since(start))
	}
	if tr := r.transcript(); len(tr) != 1 || tr[0].Text != "Our time is up. Goodbye." {
		t.Errorf("transcript:\n%s", lines(tr))
	}
}

// A dead or slow service: the caller hears a fallback sentence (when
// speech still works) and the call ends naming the service; the
// transcript so far is kept.
func TestServiceFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		setup  func(r *rig)
		reason string
		heard  string
	}{
		{"stt down", func(r *rig) { r.speech.PushTranscripts(speechtest.Transcript{Status: 503}) }, ReasonSTT, fallbackSTT},
		{"stt slow", func(r *rig) { r.speech.PushTranscripts(speechtest.Transcript{Text: "late", Delay: 3 * time.Second}) }, ReasonSTT, fallbackSTT},
		{"model down", func(r *rig) {
			r.texts("Hello?")
			r.model.Push(llmtest.Reply{Status: 500})
		}, ReasonModel, fallbackModel},
		{"model slow", func(r *rig) {
			r.texts("Hello?")
			r.model.Push(llmtest.Reply{Content: "Too late.", Delay: 5 * time.Second})
		}, ReasonModel, fallbackModel},
		{"tts down", func(r *rig) {
			r.texts("Hello?")
			r.speech.AnswerSpeech(func(speechtest.SpeakRequest) speechtest.Speech { return speechtest.Speech{Status: 503} })
		}, ReasonTTS, ""},
		{"tts slow", func(r *rig) {
			r.texts("Hello?")
			r.speech.AnswerSpeech(func(speechtest.SpeakRequest) speechtest.Speech {
				return speechtest.Speech{Tone: 440, Rate: dial.SampleRate, FirstByte: 3 * time.Second}
			})
		}, ReasonTTS, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, nil, nil)
			c.setup(r)
			done := r.start()
			r.media.say(voiceOf(t, "Hello?"))
			end := r.end(done, 20*time.Second)
			if end.Reason != c.reason {
				t.Errorf("reason %q, want %q", end.Reason, c.reason)
			}
			tr := r.transcript()
			if c.heard != "" {
				if len(tr) == 0 || tr[len(tr)-1].Text != c.heard {
					t.Errorf("transcript:\n%s\nwant the fallback last", lines(tr))
				}
				if bs := bursts(r.media.agentLog()); len(bs) != 1 {
					t.Errorf("agent audio %v: want the fallback sentence", bs)
				}
			}
			if c.reason != ReasonSTT && (len(tr) == 0 || tr[0].Role != "user" || tr[0].Text != "Hello?") {
				t.Errorf("transcript:\n%s\nwant the caller's words kept", lines(tr))
			}
		})
	}
}
