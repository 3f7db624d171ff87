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

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/sipptest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
)

// The keypad on the wire: agentd calls a phone menu (sipp) whose SDP has
// no telephone-event; the menu speaks, the scripted model presses 2 then #
// with send_dtmf (and hangs up), and the menu's scenario expects the keys
// as SIP INFO, in order, before the BYE. The transcript notes the keys.
func TestSendDTMFOverSIP(t *testing.T) {
	for _, tool := range []string{"sipp", "espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	sippDir := filepath.Join(dir, "sipp")
	os.MkdirAll(sippDir, 0o755)
	raw := filepath.Join(sippDir, "espeak.wav")
	menu := "For sales press one. For support press two, then the hash key."
	if out, err := exec.Command("espeak-ng", "-w", raw, menu).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("sox", raw, "-r", "8000", "-c", "1", "-e", "u-law", filepath.Join(sippDir, "callee.wav")).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	model := llmtest.New(t)
	model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{ID: "k1", Name: "send_dtmf", Arguments: `{"digits":"2#"}`},
		{ID: "k2", Name: "end_call", Arguments: "{}"}}})
	sp := speechtest.New(t)
	sp.PushTranscripts(speechtest.Transcript{Text: menu})
	sipPort, sippPort := sipptest.FreePort(t), sipptest.FreePort(t)
	s := start(t, dir, "--dialer", "sip", "--sip-trunk", "127.0.0.1:"+strconv.Itoa(sippPort),
		"--sip-listen", "127.0.0.1:"+strconv.Itoa(sipPort), "--rtp-ports", "33500-33599",
		"--stt", "openai", "--stt-url", sp.URL, "--tts", "openai", "--tts-url", sp.URL,
		"--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted")
	r := s.must("POST", "/api/v1/agents", s.Key, map[string]any{"name": "Ada", "type": "voice", "phoneNumbers": []string{"+15550001111"},
		"instructions": "You reach the support line through its phone menu."})
	if r.status != 201 {
		t.Fatalf("agent: %d %s", r.status, r.body)
	}
	var agent struct{ Data struct{ ID string } }
	json.Unmarshal(r.body, &agent)
	cmd := exec.Command("sipp", "-sf", sipptest.Scenario(t, "ivr_info"), "-i", "127.0.0.1", "-p", strconv.Itoa(sippPort),
		"-mp", strconv.Itoa(sipptest.FreePort(t)), "-m", "1", "-nostdin", "-timeout", "40s", "-timeout_error")
	cmd.Dir = sippDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // by PID
	sipptest.WaitBound(t, sippPort)
	if r := s.must("POST", "/api/v1/calls/outbound", s.Key, map[string]any{"agentId": agent.Data.ID, "phoneNumber": "+14155550100"}); r.status != 201 {
		t.Fatalf("outbound: %d %s", r.status, r.body)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sipp: %v (the keys never came?)\n%s\n%s", err, out.String(), s.Logs.String())
	}
	if req := model.Last(); !strings.Contains(req.All(), "press two") {
		t.Errorf("the model got:\n%s", req.All())
	}
	var tr []string
	testkit.Within(10*time.Second, func() bool {
		var list struct {
			Data struct{ Calls []struct{ ID, Status string } }
		}
		json.Unmarshal(s.must("GET", "/api/v1/calls", s.Key, nil).body, &list)
		if len(list.Data.Calls) != 1 || list.Data.Calls[0].Status != "completed" {
			return false
		}
		var call struct {
			Data struct{ Transcript []struct{ Role, Text string } }
		}
		json.Unmarshal(s.must("GET", "/api/v1/calls/"+list.Data.Calls[0].ID, s.Key, nil).body, &call)
		for _, l := range call.Data.Transcript {
			tr = append(tr, l.Role+": "+l.Text)
		}
		return true
	})
	if got := strings.Join(tr, "\n"); !strings.Contains(got, `tool: send_dtmf {"digits":"2#"}`) {
		t.Errorf("transcript:\n%s", got)
	}
}
