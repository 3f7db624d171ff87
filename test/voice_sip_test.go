package test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/sipptest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/internal/wav"
)

// An inbound call over real SIP to a voice agent's number: sipp calls,
// listens to the first message, speaks espeak-ng's speech as RTP; agentd
// transcribes it (the scripted speech server hears the caller's audio),
// answers through the scripted model, which ends the call: agentd says
// goodbye and hangs up (sipp gets the BYE). The call's record holds the
// transcript, the latency, and the recording shows the agent's audio on
// the wire before and after the caller's.
func TestVoiceInboundOverSIP(t *testing.T) { voiceOverSIP(t, false, "") }

// The same on an outbound call: agentd dials sipp, which answers and
// speaks.
func TestVoiceOutboundOverSIP(t *testing.T) { voiceOverSIP(t, true, "") }

// Barge-in on the wire: the caller speaks 3 s into a long first message;
// the agent's audio stops within 300 ms of the threshold (interruption
// threshold 0.3: 370 ms of speech) being crossed, and the transcript keeps
// the part heard, interrupted.
func TestVoiceBargeInOverSIP(t *testing.T) { voiceOverSIP(t, false, longFirstMessage) }

const longFirstMessage = "Hello, this is Ada from the bakery on Main Street. We have fresh bread, cakes and pastries every " +
	"morning from seven, and today there is a special offer on birthday cakes and on our sourdough. How can I help you?"

func voiceOverSIP(t *testing.T, outbound bool, first string) {
	greeting := "Hello, this is Ada from the bakery."
	if first != "" {
		greeting = first
	}
	for _, tool := range []string{"sipp", "espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	sippDir := filepath.Join(dir, "sipp")
	os.MkdirAll(sippDir, 0o755)
	raw := filepath.Join(sippDir, "espeak.wav")
	if out, err := exec.Command("espeak-ng", "-w", raw, "I would like to order a chocolate cake for Saturday.").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	scenario, file, direction := "voice_caller", "caller.wav", "inbound"
	if outbound {
		scenario, file, direction = "voice_callee", "callee.wav", "outbound"
	}
	if out, err := exec.Command("sox", raw, "-r", "8000", "-c", "1", "-e", "u-law", filepath.Join(sippDir, file)).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}

	model := llmtest.New(t)
	model.Push(llmtest.Reply{Content: "Of course, it will be ready on Saturday. Goodbye!",
		ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "end_call", Arguments: "{}"}}},
		llmtest.Reply{Content: `{"summary": "The caller ordered a chocolate cake for Saturday."}`}) // the post-call analysis
	sp := speechtest.New(t)
	sp.PushTranscripts(speechtest.Transcript{Text: "I would like to order a chocolate cake for Saturday."})
	sipPort, sippPort := sipptest.FreePort(t), sipptest.FreePort(t)
	s := start(t, dir, "--dialer", "sip", "--sip-trunk", "127.0.0.1:"+strconv.Itoa(sippPort),
		"--sip-listen", "127.0.0.1:"+strconv.Itoa(sipPort), "--rtp-ports", "33400-33499",
		"--stt", "openai", "--stt-url", sp.URL, "--tts", "openai", "--tts-url", sp.URL,
		"--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted", "--recording-dir", filepath.Join(dir, "rec"))
	r := s.must("POST", "/api/v1/agents", s.Key, map[string]any{"name": "Ada", "type": "voice", "phoneNumbers": []string{"+15550001111"},
		"instructions": "You are Ada, the bakery's phone agent.", "config": map[string]any{"firstMessage": greeting, "interruptionThreshold": 0.3},
		"analysisPlan": map[string]any{"summary": map[string]any{"enabled": true}}})
	if r.status != 201 {
		t.Fatalf("agent: %d %s", r.status, r.body)
	}
	var agent struct{ Data struct{ ID string } }
	json.Unmarshal(r.body, &agent)

	args := []string{"-sf", sipptest.Scenario(t, scenario), "-i", "127.0.0.1", "-p", strconv.Itoa(sippPort),
		"-mp", strconv.Itoa(sipptest.FreePort(t)), "-m", "1", "-nostdin", "-timeout", "40s", "-timeout_error"}
	if !outbound {
		args = append(args, "-s", "+15550001111", "127.0.0.1:"+strconv.Itoa(sipPort))
	}
	cmd := exec.Command("sipp", args...)
	cmd.Dir = sippDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // by PID
	if outbound {
		sipptest.WaitBound(t, sippPort) // sipp holds its port
		if r := s.must("POST", "/api/v1/calls/outbound", s.Key, map[string]any{"agentId": agent.Data.ID, "phoneNumber": "+14155550100"}); r.status != 201 {
			t.Fatalf("outbound: %d %s", r.status, r.body)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sipp: %v (the agent never hung up?)\n%s\n%s", err, out.String(), s.Logs.String())
	}

	var list struct {
		Data struct{ Calls []struct{ ID string } }
	}
	var id string
	testkit.Within(10*time.Second, func() bool {
		json.Unmarshal(s.must("GET", "/api/v1/calls?direction="+direction, s.Key, nil).body, &list)
		if len(list.Data.Calls) == 1 {
			id = list.Data.Calls[0].ID
		}
		return id != ""
	})
	if id == "" {
		t.Fatalf("no %s call recorded", direction)
	}
	var call struct {
		Data struct {
			Status     string
			Transcript []struct {
				Role, Text  string
				Interrupted bool
			}
			Latency *struct {
				Turns             []map[string]int64
				VoiceToVoiceP95Ms int64
			}
			RecordingURL string
		}
	}
	testkit.Within(10*time.Second, func() bool {
		json.Unmarshal(s.must("GET", "/api/v1/calls/"+id, s.Key, nil).body, &call)
		return call.Data.Status == "completed" && call.Data.Latency != nil
	})
	var tr []string
	for _, l := range call.Data.Transcript {
		tr = append(tr, l.Role+": "+l.Text)
	}
	if first != "" && len(call.Data.Transcript) > 0 { // interrupted: the part heard
		l := call.Data.Transcript[0]
		if !l.Interrupted || !strings.HasPrefix(first, l.Text) || len(l.Text) >= len(first) {
			t.Errorf("first line %+v: want the part of the greeting heard, interrupted", l)
		}
		tr[0] = "agent: " + greeting
	}
	want := []string{"agent: " + greeting, "user: I would like to order a chocolate cake for Saturday.",
		"tool: end_call", "agent: Of course, it will be ready on Saturday. Goodbye!"}
	if strings.Join(tr, "\n") != strings.Join(want, "\n") {
		t.Errorf("transcript:\n%s\nwant:\n%s", strings.Join(tr, "\n"), strings.Join(want, "\n"))
	}
	if call.Data.Status != "completed" || call.Data.Latency == nil || len(call.Data.Latency.Turns) != 1 {
		t.Fatalf("call %+v", call.Data)
	}
	t.Logf("latency %+v", call.Data.Latency.Turns[0])
	// The post-call analysis runs on the transcript's rows.
	var an struct {
		Data struct{ Status, Summary string }
	}
	testkit.Within(15*time.Second, func() bool {
		json.Unmarshal(s.must("GET", "/api/v1/calls/"+id+"/analysis", s.Key, nil).body, &an)
		return an.Data.Status == "completed"
	})
	if an.Data.Status != "completed" || !strings.Contains(an.Data.Summary, "chocolate cake") ||
		!strings.Contains(model.Last().All(), "I would like to order a chocolate cake") {
		t.Errorf("analysis %+v; the model got:\n%s", an.Data, model.Last().All())
	}
	heard := sp.Heard()
	if len(heard) != 1 || heard[0].Duration < 2*time.Second || heard[0].RMS < 300 {
		t.Fatalf("speech-to-text got %d requests (%+v): want the caller's speech", len(heard), heard)
	}

	// The recording (the wire's two sides on the call's clock): the agent
	// speaks, then the caller, then the agent again.
	rec := s.must("GET", "/api/v1/calls/"+id+"/recording", s.Key, nil)
	pcm, f, err := wav.ReadAll(bytes.NewReader(rec.body))
	if err != nil || f.Channels != 2 {
		t.Fatalf("recording: %v %+v (%d)", err, f, rec.status)
	}
	caller, agentSide := activity(pcm, 0), activity(pcm, 1)
	if first != "" {
		// 20 ms frames: the caller's first loud frame, the agent's last
		// before its answer.
		onset, stop := -1, -1
		for i := 0; (i+1)*160*2 <= len(pcm); i++ {
			l, r := frameRMS(pcm, i, 0), frameRMS(pcm, i, 1)
			if onset < 0 && l > 1000 {
				onset = i
			}
			if onset >= 0 && r > 300 {
				stop = i
			}
			if onset >= 0 && i > onset+50 {
				break // the agent's next audio is its answer, much later
			}
		}
		threshold := 370 * time.Millisecond
		lag := time.Duration(stop-onset)*20*time.Millisecond - threshold
		t.Logf("caller onset at %v, agent's audio last at %v: %v after the threshold", time.Duration(onset)*20*time.Millisecond,
			time.Duration(stop)*20*time.Millisecond, lag)
		if onset < 0 || lag > 300*time.Millisecond {
			t.Errorf("barge-in: the agent's audio stopped %v after the threshold was crossed", lag)
		}
	}
	overlap := 0 // 100 ms windows the agent may go on over the caller (barge-in: up to its threshold)
	if first != "" {
		overlap = 7
	}
	if len(agentSide) < 2 || len(caller) < 1 || agentSide[0][1] > caller[0][0]+overlap || agentSide[len(agentSide)-1][0] < caller[0][1] {
		t.Errorf("activity (100 ms windows): agent %v caller %v: want agent, caller, agent", agentSide, caller)
	}
}

// frameRMS is the RMS of 20 ms frame i of one channel of a stereo recording.
func frameRMS(pcm []int16, i, ch int) float64 {
	var sum float64
	for j := i * 160; j < (i+1)*160; j++ {
		v := float64(pcm[2*j+ch])
		sum += v * v
	}
	return math.Sqrt(sum / 160)
}

// activity lists the runs of speech of one channel of a stereo recording,
// in 100 ms windows ([first, last]), runs split by 500 ms of quiet.
func activity(pcm []int16, ch int) [][2]int {
	const win = 800
	var out [][2]int
	quiet := 0
	for w := 0; (w+1)*win*2 <= len(pcm); w++ {
		var sum float64
		for i := w * win; i < (w+1)*win; i++ {
			v := float64(pcm[2*i+ch])
			sum += v * v
		}
		if math.Sqrt(sum/win) < 300 {
			quiet++
			continue
		}
		if len(out) == 0 || quiet >= 5 {
			out = append(out, [2]int{w, w})
		}
		out[len(out)-1][1] = w
		quiet = 0
	}
	return out
}
