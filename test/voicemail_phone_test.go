package test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/baresiptest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/internal/wav"
)

// An outbound call answered by a machine (baresip speaking a voicemail
// greeting made with espeak-ng, then a 1400 Hz beep): the agent says
// nothing over the greeting, leaves its message after the beep, and hangs
// up. The phone's own recording has the message after the beep and
// nothing before; the call records answeredBy machine and the outcome
// voicemail.
func TestVoicemailLeftOnPhone(t *testing.T) {
	needTools(t, "baresip", "espeak-ng", "sox")
	greeting := speechtest.Espeak(t, "Hi, you have reached John Smith. I am not available right now, please leave a message after the tone.", 8000)
	speak := append(append(append([]int16(nil), greeting...), make([]int16, 4000)...), speechtest.Tone(1400, 600*time.Millisecond, 8000)...)
	beepEnd := time.Duration(len(speak)) * time.Second / 8000
	phone := baresiptest.Start(t, "+14155550100", append(speak, make([]int16, 20*8000)...))

	model := llmtest.New(t)
	sp := speechtest.New(t)
	v := startVoice(t, phone.Addr, sp, model)
	msg := "Hi John, this is Ada from the bakery. Your chocolate cake is ready for Saturday. Goodbye."
	r := v.s.must("POST", "/api/v1/agents", v.s.Key, map[string]any{"name": "Ada", "type": "voice", "phoneNumbers": []string{"+15550002222"},
		"instructions": "You are Ada.", "config": map[string]any{"firstMessage": "Hello, this is Ada from the bakery.",
			"voicemail": map[string]any{"action": "leave_message", "message": msg}}})
	if r.status != 201 {
		t.Fatalf("agent: %d %s", r.status, r.body)
	}
	var a struct{ Data struct{ ID string } }
	json.Unmarshal(r.body, &a)
	if r := v.s.must("POST", "/api/v1/calls/outbound", v.s.Key, map[string]any{"agentId": a.Data.ID, "phoneNumber": "+14155550100"}); r.status != 201 {
		t.Fatalf("outbound: %d %s", r.status, r.body)
	}
	call := v.finished(t, "outbound")
	var rec struct {
		Data struct {
			AnsweredBy  string
			LastOutcome *string
			Outcome     *string
		}
	}
	testkit.Within(10*time.Second, func() bool {
		json.Unmarshal(v.s.must("GET", "/api/v1/calls/"+call.ID, v.s.Key, nil).body, &rec)
		return rec.Data.LastOutcome != nil
	})
	if rec.Data.AnsweredBy != "machine" || rec.Data.LastOutcome == nil || *rec.Data.LastOutcome != "voicemail" ||
		rec.Data.Outcome == nil || *rec.Data.Outcome != "voicemail" {
		t.Errorf("call %+v: want answeredBy machine, outcome voicemail", rec.Data)
	}
	if got := strings.Join(call.lines(), "\n"); got != "tool: answering machine (long greeting)\nagent: "+msg {
		t.Errorf("transcript:\n%s", got)
	}
	if len(model.Got()) != 0 {
		t.Errorf("the model was asked %d times on a machine's call", len(model.Got()))
	}

	// The phone's recording, in 100 ms windows from the answer: quiet
	// until its beep has ended, then the message.
	heard := phone.Heard(t)
	if dir := os.Getenv("AGENTD_TEST_AUDIO_DIR"); dir != "" { // to look at (sox ... spectrogram)
		os.WriteFile(filepath.Join(dir, "voicemail-phone-heard.wav"), wav.Encode(wav.Format{Rate: 8000, Channels: 1}, heard), 0o644)
	}
	runs := activity(stereo(heard), 0)
	t.Logf("beep ended %v after the answer; the phone heard speech in 100 ms windows %v", beepEnd, runs)
	end := int(beepEnd / (100 * time.Millisecond))
	if len(runs) == 0 || runs[0][0] < end || runs[0][0] > end+15 {
		t.Fatalf("the phone heard %v: want nothing before window %d (the beep's end), the message soon after", runs, end)
	}
	msgLen := runs[len(runs)-1][1] - runs[0][0] + 1
	var sum float64
	after := heard[min(len(heard), runs[0][0]*800):min(len(heard), (runs[0][0]+msgLen)*800)]
	for _, s := range after {
		sum += float64(s) * float64(s)
	}
	rms := math.Sqrt(sum / float64(max(1, len(after))))
	if msgLen < 30 || rms < 500 {
		t.Errorf("the message heard: %d windows at RMS %.0f, want several seconds of speech", msgLen, rms)
	}
}
