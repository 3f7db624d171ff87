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

	"github.com/agentd/agentd/internal/testkit/baresiptest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/sipptest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/internal/wav"
)

// The transfer tests: agentd calls a customer (sipp, whose scenario
// decides how the trunk treats REFER), who asks for sales; the scripted
// model calls transfer_call; the person at sales is baresip (it answers,
// says "Hello?", and records what it hears) or a busy sipp.

const askSales = "Please put me through to sales."

// transferCall is one such call, run to its end.
type transferCall struct {
	v      *voiceRig
	call   voiceCall
	record struct {
		Transfers []struct{ Destination, Mode, Method, Outcome, Detail string }
	}
	events []string
}

// runTransfer runs scenario as the customer (askSales; then, when
// toneAfter is set, quiet that long and a 600 Hz tone for 8 s) with one
// destination "Sales" at target in mode.
func runTransfer(t *testing.T, scenario, target, mode string, toneAfter time.Duration) *transferCall {
	t.Helper()
	needTools(t, "sipp", "espeak-ng", "sox")
	sippDir := t.TempDir()
	caller := speechtest.Espeak(t, askSales, 8000)
	if toneAfter > 0 {
		caller = append(append(caller, make([]int16, int(toneAfter.Seconds()*8000))...), speechtest.Tone(600, 8*time.Second, 8000)...)
	}
	writeULaw(t, filepath.Join(sippDir, "callee.wav"), caller)

	model := llmtest.New(t)
	model.Push(llmtest.Reply{Content: "Sure, one moment.", ToolCalls: []llmtest.ToolCall{
		{ID: "t1", Name: "transfer_call", Arguments: `{"destination":"Sales","reason":"wants to order a cake"}`}}})
	sp := speechtest.New(t)
	sp.PushTranscripts(speechtest.Transcript{Text: askSales})
	sippPort := sipptest.FreePort(t)
	v := startVoice(t, "127.0.0.1:"+strconv.Itoa(sippPort), sp, model)
	dest := map[string]any{"name": "Sales", "description": "orders and prices", "mode": mode}
	if strings.HasPrefix(target, "sip:") {
		dest["sipUri"] = target
	} else {
		dest["number"] = target
	}
	r := v.s.must("POST", "/api/v1/agents", v.s.Key, map[string]any{"name": "Ada", "type": "voice", "phoneNumbers": []string{"+15550002222"},
		"instructions": "You are Ada.", "config": map[string]any{"transferDestinations": []any{dest}}})
	if r.status != 201 {
		t.Fatalf("agent: %d %s", r.status, r.body)
	}
	var a struct{ Data struct{ ID string } }
	json.Unmarshal(r.body, &a)

	cmd := exec.Command("sipp", "-sf", sipptest.Scenario(t, scenario), "-i", "127.0.0.1", "-p", strconv.Itoa(sippPort),
		"-mp", strconv.Itoa(sipptest.FreePort(t)), "-m", "1", "-nostdin", "-timeout", "60s", "-timeout_error")
	cmd.Dir = sippDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // by PID
	sipptest.WaitBound(t, sippPort)
	if r := v.s.must("POST", "/api/v1/calls/outbound", v.s.Key, map[string]any{"agentId": a.Data.ID, "phoneNumber": "+14155550100"}); r.status != 201 {
		t.Fatalf("outbound: %d %s", r.status, r.body)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sipp: %v\n%s\n%s", err, out.String(), v.s.Logs.String())
	}
	tc := &transferCall{v: v, call: v.finished(t, "outbound")}
	var rec struct{ Data json.RawMessage }
	json.Unmarshal(v.s.must("GET", "/api/v1/calls/"+tc.call.ID, v.s.Key, nil).body, &rec)
	json.Unmarshal(rec.Data, &tc.record)
	var evs struct {
		Data struct{ Events []struct{ Type string } }
	}
	json.Unmarshal(v.s.must("GET", "/api/v2/events?type=call.transferred,call.transfer_failed", v.s.Key, nil).body, &evs)
	for _, e := range evs.Data.Events {
		tc.events = append(tc.events, e.Type)
	}
	return tc
}

func writeULaw(t *testing.T, path string, pcm []int16) {
	t.Helper()
	raw := path + ".pcm.wav"
	if err := os.WriteFile(raw, wav.Encode(wav.Format{Rate: 8000, Channels: 1}, pcm), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sox", raw, "-r", "8000", "-c", "1", "-e", "u-law", path).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
}

func (tc *transferCall) check(t *testing.T, method, outcome, event, line string) {
	t.Helper()
	tr := tc.record.Transfers
	if len(tr) != 1 || tr[0].Destination != "Sales" || tr[0].Method != method || tr[0].Outcome != outcome {
		t.Errorf("transfers %+v: want one to Sales, %s, %s", tr, method, outcome)
	}
	if strings.Join(tc.events, ",") != event {
		t.Errorf("events %v, want %s", tc.events, event)
	}
	if got := strings.Join(tc.call.lines(), "\n"); !strings.Contains(got, line) {
		t.Errorf("transcript:\n%s\nwant a line %q", got, line)
	}
}

// Cold, by REFER: the customer's phone accepts the REFER to sales and
// reports the target answered (NOTIFY sipfrag 200); agentd hangs up.
func TestTransferColdByRefer(t *testing.T) {
	tc := runTransfer(t, "transfer_refer", "sip:sales@127.0.0.1:5999", "cold", 0)
	tc.check(t, "refer", "transferred", "call.transferred", "tool: transfer_call: transferred to Sales (cold, refer)")
}

// Cold, by bridging: the trunk refuses REFER, agentd calls sales itself
// and joins the two calls: sales hears the customer's 600 Hz tone.
func TestTransferColdByBridge(t *testing.T) {
	sales := baresiptest.Start(t, "+14155550199", append(speechtest.Espeak(t, "Hello?", 8000), make([]int16, 30*8000)...))
	tc := runTransfer(t, "transfer_refuse", "sip:+14155550199@"+sales.Addr, "cold", 6*time.Second)
	tc.check(t, "bridge", "transferred", "call.transferred", "tool: transfer_call: transferred to Sales (cold, bridge)")
	heard := sales.Heard(t)
	saveAudio(t, "transfer-cold-sales-heard.wav", heard)
	if at, ok := toneAt(heard, 600); !ok {
		t.Errorf("sales never heard the customer's 600 Hz tone through the bridge")
	} else {
		t.Logf("sales heard the customer's tone from %v", at)
	}
}

// Warm: agentd calls sales, waits for their "Hello?", briefs them (the
// customer does not hear it), then joins the calls: sales hears the
// briefing first, then the customer's tone.
func TestTransferWarmBriefsFirst(t *testing.T) {
	sales := baresiptest.Start(t, "+14155550199", append(speechtest.Espeak(t, "Hello?", 8000), make([]int16, 30*8000)...))
	// The briefing takes about 9 s: the customer's tone starts 14 s after
	// their request.
	tc := runTransfer(t, "transfer_wait", "sip:+14155550199@"+sales.Addr, "warm", 14*time.Second)
	tc.check(t, "bridge", "transferred", "call.transferred", "tool: transfer_call: transferred to Sales (warm, bridge)")
	if tr := tc.record.Transfers; len(tr) == 1 && !strings.Contains(tr[0].Detail, "wants to order a cake") {
		t.Errorf("briefing %q: want the reason in it", tr[0].Detail)
	}
	heard := sales.Heard(t)
	saveAudio(t, "transfer-warm-sales-heard.wav", heard)
	runs := activity(stereo(heard), 0)
	toneFrom, ok := toneAt(heard, 600)
	t.Logf("sales heard speech in 100 ms windows %v, the customer's tone from %v", runs, toneFrom)
	if !ok || len(runs) < 2 {
		t.Fatalf("sales heard %v (tone %v): want the briefing, then the customer", runs, ok)
	}
	brief := runs[0]
	if time.Duration(brief[1]-brief[0]+1)*100*time.Millisecond < 2*time.Second ||
		time.Duration(brief[1])*100*time.Millisecond > toneFrom {
		t.Errorf("the briefing %v (100 ms windows) must come whole before the customer's tone at %v", brief, toneFrom)
	}
}

// Warm, nobody takes it (sales is busy): the agent comes back to the
// customer and says so; the attempt is recorded failed.
func TestTransferWarmReturnsWhenBusy(t *testing.T) {
	busy := sipptest.Start(t, "busy", sipptest.Options{Calls: 1})
	tc := runTransfer(t, "transfer_wait", "sip:+14155550199@"+busy.Addr, "warm", 0)
	tc.check(t, "bridge", "busy", "call.transfer_failed", "agent: I'm sorry, I couldn't connect you to Sales: the line is busy.")
	lines := tc.call.lines()
	if n := len(lines); n == 0 || !strings.HasPrefix(lines[n-1], "agent: I'm sorry") {
		t.Errorf("transcript:\n%s\nwant the agent's word to the customer last", strings.Join(lines, "\n"))
	}
}

// toneAt is where a 100 ms window first has most (> 80%) of its energy
// at hz (Goertzel), loud: a tone, not speech.
func toneAt(pcm []int16, hz float64) (time.Duration, bool) {
	const win = 800
	k := 2 * math.Cos(2*math.Pi*hz/8000)
	for i := 0; i+win <= len(pcm); i += win {
		var sum, s1, s2 float64
		for _, v := range pcm[i : i+win] {
			x := float64(v)
			sum += x * x
			s1, s2 = x+k*s1-s2, s1
		}
		power := s1*s1 + s2*s2 - k*s1*s2
		if math.Sqrt(sum/win) > 1000 && power/(sum*win/2) > 0.8 {
			return time.Duration(i) * time.Second / 8000, true
		}
	}
	return 0, false
}

func saveAudio(t *testing.T, name string, pcm []int16) {
	if dir := os.Getenv("AGENTD_TEST_AUDIO_DIR"); dir != "" { // to look at (sox ... spectrogram)
		os.WriteFile(filepath.Join(dir, name), wav.Encode(wav.Format{Rate: 8000, Channels: 1}, pcm), 0o644)
	}
}
