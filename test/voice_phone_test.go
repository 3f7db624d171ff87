package test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/baresiptest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/sipptest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
)

// An outbound call answered by baresip, a real softphone, which listens to
// the first message, says espeak-ng's speech and then listens again: what
// the phone heard (its own recording) is the agent's first message, then
// quiet while it spoke, then the answer; the transcript holds both sides.
func TestVoicePhoneHearsTheAgent(t *testing.T) {
	needTools(t, "baresip", "espeak-ng", "sox")
	said := "I would like to order a chocolate cake for Saturday."
	speech := speechtest.Espeak(t, said, 8000)
	speak := append(make([]int16, 4*8000), speech...)
	phone := baresiptest.Start(t, "+14155550100", append(speak, make([]int16, 20*8000)...))

	model := llmtest.New(t)
	model.Push(llmtest.Reply{Content: "Of course, it will be ready on Saturday. Goodbye!",
		ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "end_call", Arguments: "{}"}}})
	sp := speechtest.New(t)
	sp.PushTranscripts(speechtest.Transcript{Text: said})
	v := startVoice(t, phone.Addr, sp, model)
	if r := v.s.must("POST", "/api/v1/calls/outbound", v.s.Key, map[string]any{"agentId": v.agent, "phoneNumber": "+14155550100"}); r.status != 201 {
		t.Fatalf("outbound: %d %s", r.status, r.body)
	}
	call := v.finished(t, "outbound")
	if call.Status != "completed" {
		t.Fatalf("call %+v\n%s", call, v.s.Logs.String())
	}
	want := []string{"agent: Hello, this is Ada from the bakery.", "user: " + said, "tool: end_call",
		"agent: Of course, it will be ready on Saturday. Goodbye!"}
	if got := call.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("transcript:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if h := sp.Heard(); len(h) != 1 || h[0].Duration < 2*time.Second || h[0].RMS < 300 {
		t.Errorf("speech-to-text got %+v: want the phone's speech", h)
	}

	heard := phone.Heard(t)
	runs := activity(stereo(heard), 0)
	t.Logf("the phone heard speech in 100 ms windows %v", runs)
	if len(runs) < 2 {
		t.Fatalf("the phone heard %v: want the first message, then the answer", runs)
	}
	first, answer := runs[0], runs[len(runs)-1]
	// The answer comes after the phone's own speech (4 s in, about 3 s
	// long) and the endpointing: well after the first message ends.
	if first[0] > 20 || answer[0] < 60 || answer[0]-first[1] < 20 {
		t.Errorf("the phone heard %v: want the first message at answer and the reply after its own speech", runs)
	}
}

// A caller presses 4 then 2 (RFC 4733 events played by sipp from its own
// captures): the digits reach the model together as the caller's turn.
func TestVoiceKeypadOverSIP(t *testing.T) {
	needTools(t, "sipp", "espeak-ng", "sox")
	model := llmtest.New(t)
	model.Push(llmtest.Reply{Content: "You chose option forty-two. Goodbye!",
		ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "end_call", Arguments: "{}"}}})
	sp := speechtest.New(t)
	v := startVoice(t, "127.0.0.1:9", sp, model)
	sippDir := t.TempDir()
	for _, d := range []string{"4", "2"} {
		pcap, err := os.ReadFile("/usr/share/sip-tester/dtmf_2833_" + d + ".pcap")
		if err != nil {
			t.Fatalf("sipp's DTMF capture (Debian's sip-tester ships it): %v", err)
		}
		os.WriteFile(filepath.Join(sippDir, "dtmf_"+d+".pcap"), pcap, 0o644)
	}
	v.sippCalls(t, sippDir, "voice_keypad")
	call := v.finished(t, "inbound")
	if got := model.Got(); len(got) == 0 || !strings.Contains(got[0].All(), "user: [keypad: 4 2]") {
		t.Errorf("the model got %d requests; first:\n%s", len(got), first(got))
	}
	if l := call.lines(); len(l) < 2 || l[1] != "user: [keypad: 4 2]" {
		t.Errorf("transcript %q", l)
	}
}

// The speech-to-text service is down: the caller hears a fallback
// sentence, the call ends (sipp gets the BYE) failed with the service's
// name, and the transcript so far is kept.
func TestVoiceDeadSpeechServiceOverSIP(t *testing.T) {
	needTools(t, "sipp", "espeak-ng", "sox")
	model := llmtest.New(t)
	sp := speechtest.New(t)
	sp.PushTranscripts(speechtest.Transcript{Status: 503})
	v := startVoice(t, "127.0.0.1:9", sp, model)
	sippDir := t.TempDir()
	raw := filepath.Join(sippDir, "espeak.wav")
	if out, err := exec.Command("espeak-ng", "-w", raw, "Hello, is anybody there?").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("sox", raw, "-r", "8000", "-c", "1", "-e", "u-law", filepath.Join(sippDir, "caller.wav")).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	v.sippCalls(t, sippDir, "voice_caller")
	call := v.finished(t, "inbound")
	if call.Status != "failed" || call.FailureReason == nil || *call.FailureReason != "speech-to-text service unavailable" {
		t.Errorf("call %s, failure_reason %v: want failed naming the speech-to-text service", call.Status, call.FailureReason)
	}
	l := call.lines()
	if len(l) < 2 || l[0] != "agent: Hello, this is Ada from the bakery." || !strings.HasPrefix(l[len(l)-1], "agent: I'm sorry") {
		t.Errorf("transcript %q: want the first message kept and the fallback sentence last", l)
	}
	if n := len(model.Got()); n != 0 {
		t.Errorf("the model was asked %d times with nothing heard", n)
	}
}

// voiceRig is agentd with its SIP dialer, the scripted speech service and
// model, and a voice agent answering +15550001111.
type voiceRig struct {
	s       *server
	agent   string
	sipPort int
}

func startVoice(t *testing.T, trunk string, sp *speechtest.Server, model *llmtest.Server) *voiceRig {
	t.Helper()
	dir := t.TempDir()
	sipPort := sipptest.FreePort(t)
	s := start(t, dir, "--dialer", "sip", "--sip-trunk", trunk, "--sip-listen", "127.0.0.1:"+strconv.Itoa(sipPort),
		"--rtp-ports", "33500-33599", "--stt", "openai", "--stt-url", sp.URL, "--tts", "openai", "--tts-url", sp.URL,
		"--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted", "--recording-dir", filepath.Join(dir, "rec"))
	r := s.must("POST", "/api/v1/agents", s.Key, map[string]any{"name": "Ada", "type": "voice", "phoneNumbers": []string{"+15550001111"},
		"instructions": "You are Ada, the bakery's phone agent.", "config": map[string]any{"firstMessage": "Hello, this is Ada from the bakery."}})
	if r.status != 201 {
		t.Fatalf("agent: %d %s", r.status, r.body)
	}
	var a struct{ Data struct{ ID string } }
	json.Unmarshal(r.body, &a)
	return &voiceRig{s: s, agent: a.Data.ID, sipPort: sipPort}
}

// sippCalls runs sipp's scenario as the caller of the agent's number, in
// dir, until the agent hangs up.
func (v *voiceRig) sippCalls(t *testing.T, dir, scenario string) {
	t.Helper()
	cmd := exec.Command("sipp", "-sf", sipptest.Scenario(t, scenario), "-i", "127.0.0.1", "-p", strconv.Itoa(sipptest.FreePort(t)),
		"-mp", strconv.Itoa(sipptest.FreePort(t)), "-m", "1", "-nostdin", "-timeout", "40s", "-timeout_error",
		"-s", "+15550001111", "127.0.0.1:"+strconv.Itoa(v.sipPort))
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("sipp: %v (the agent never hung up?)\n%s\n%s", err, out.String(), v.s.Logs.String())
	}
}

// voiceCall is the part of a call record these tests read.
type voiceCall struct {
	ID            string
	Status        string
	FailureReason *string `json:"failure_reason"`
	Transcript    []struct{ Role, Text string }
	Latency       *struct{ Turns []map[string]int64 }
}

func (c voiceCall) lines() []string {
	var out []string
	for _, l := range c.Transcript {
		out = append(out, l.Role+": "+l.Text)
	}
	return out
}

// finished waits for the one call of direction to reach a final status.
func (v *voiceRig) finished(t *testing.T, direction string) voiceCall {
	t.Helper()
	var c voiceCall
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var list struct{ Data struct{ Calls []voiceCall } }
		json.Unmarshal(v.s.must("GET", "/api/v1/calls?direction="+direction, v.s.Key, nil).body, &list)
		if len(list.Data.Calls) != 1 {
			continue
		}
		var one struct{ Data voiceCall }
		json.Unmarshal(v.s.must("GET", "/api/v1/calls/"+list.Data.Calls[0].ID, v.s.Key, nil).body, &one)
		if c = one.Data; c.Status == "completed" || c.Status == "failed" {
			return c
		}
	}
	t.Fatalf("no final %s call: %+v\n%s", direction, c, v.s.Logs.String())
	return c
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed (CI installs it)", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
}

// stereo makes mono audio a stereo recording's left side, for activity.
func stereo(mono []int16) []int16 {
	out := make([]int16, 0, 2*len(mono))
	for _, v := range mono {
		out = append(out, v, 0)
	}
	return out
}

func first(rs []llmtest.Request) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].All()
}
