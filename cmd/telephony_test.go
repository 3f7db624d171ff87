package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// Flags beat env, env beats defaults.
func TestTelephonyFlagsFromEnv(t *testing.T) {
	t.Setenv("AGENTD_SIP_TRUNK", "10.0.0.1:5080")
	t.Setenv("AGENTD_SIP_TRANSPORT", "tcp")
	t.Setenv("AGENTD_SIP_RING_TIMEOUT", "45s")
	t.Setenv("AGENTD_LIVEKIT_URL", "wss://lk.example.test")
	t.Setenv("AGENTD_LIVEKIT_POLL_INTERVAL", "-1s")
	c := &cobra.Command{Use: "serve"}
	var cfg calls.TelephonyConfig
	addTelephonyFlags(c, &cfg)
	if err := c.ParseFlags([]string{"--sip-transport", "udp", "--sip-username", "bob"}); err != nil {
		t.Fatal(err)
	}
	s, l := cfg.SIP, cfg.LiveKit
	if s.Trunk != "10.0.0.1:5080" || s.Transport != "udp" || s.Username != "bob" || s.RingTimeout != 45*time.Second ||
		s.ResponseTimeout != 5*time.Second || s.MaxCallDuration != time.Hour || s.RTPPorts != "10000-20000" || s.PublicAddr != "" {
		t.Errorf("sip config %+v", s)
	}
	if l.URL != "wss://lk.example.test" || l.PollInterval != -time.Second || l.RingTimeout != 30*time.Second {
		t.Errorf("livekit config %+v", l)
	}
}

// serve refuses to start a dialer without its settings, naming each missing
// flag and variable.
func TestTelephonyServeMissingSettings(t *testing.T) {
	dir := t.TempDir()
	for dialer, want := range map[string]string{
		"sip":     "agentd: --dialer sip needs --sip-trunk (env AGENTD_SIP_TRUNK)\n",
		"livekit": "agentd: --dialer livekit needs --livekit-url (env AGENTD_LIVEKIT_URL), --livekit-api-key (env AGENTD_LIVEKIT_API_KEY), --livekit-api-secret (env AGENTD_LIVEKIT_API_SECRET), --livekit-trunk-id (env AGENTD_LIVEKIT_TRUNK_ID), --livekit-agent-name (env AGENTD_LIVEKIT_AGENT_NAME)\n",
	} {
		c := exec.Command(agentdBin, "serve", "--db", dbtest.InDir(t, dir, "agentd.db"), "--addr", freePort(t), "--dialer", dialer)
		c.Env = telEnvWithout("AGENTD_SIP_", "AGENTD_LIVEKIT_")
		var errb bytes.Buffer
		c.Stderr = &errb
		if err := c.Run(); err == nil || errb.String() != want {
			t.Errorf("--dialer %s: err %v, stderr %q, want %q", dialer, err, errb.String(), want)
		}
	}
}

// A bad --rtp-ports or --sip-public-addr stops the start, naming the
// flag and its variable.
func TestTelephonyServeBadMediaSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args, env []string
		want      string
	}{
		{[]string{"--rtp-ports", "20000-10000"}, nil, "--rtp-ports (AGENTD_RTP_PORTS) \"20000-10000\""},
		{nil, []string{"AGENTD_RTP_PORTS=10000"}, "--rtp-ports (AGENTD_RTP_PORTS) \"10000\""},
		{[]string{"--sip-public-addr", "pbx.example.com"}, nil, "--sip-public-addr (AGENTD_SIP_PUBLIC_ADDR) \"pbx.example.com\""},
	} {
		args := append([]string{"serve", "--db", dbtest.InDir(t, dir, "agentd.db"), "--addr", freePort(t),
			"--dialer", "sip", "--sip-trunk", "127.0.0.1:5999"}, tc.args...)
		c := exec.Command(agentdBin, args...)
		c.Env = append(telEnvWithout("AGENTD_SIP_", "AGENTD_RTP_"), tc.env...)
		var errb bytes.Buffer
		c.Stderr = &errb
		if err := c.Run(); err == nil || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v %v: err %v, stderr %q, want %q", tc.args, tc.env, err, errb.String(), tc.want)
		}
	}
}

func telEnvWithout(prefixes ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// The walkthrough with the real binary: agentd serve --dialer sip
// --sip-trunk 127.0.0.1:PORT against a running sipp, then POST
// /api/v1/calls/outbound shows queued -> connecting -> ringing -> active ->
// completed on GET /api/v1/calls/{id}.
func TestTelephonyServeSIPWalkthrough(t *testing.T) {
	sp := sipptest.Start(t, "telephony_walkthrough", sipptest.Options{})
	dir := t.TempDir()
	addr := freePort(t)
	srv := exec.Command(agentdBin, "serve", "--db", dbtest.InDir(t, dir, "agentd.db"), "--addr", addr,
		"--dialer", "sip", "--sip-trunk", sp.Addr)
	srv.Env = telEnvWithout("AGENTD_")
	stdout, _ := srv.StdoutPipe()
	var logs bytes.Buffer
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	key, ok := strings.CutPrefix(strings.TrimSpace(line), "owner API key: ")
	if err != nil || !ok {
		t.Fatalf("first line %q: %v", line, err)
	}
	key, _, _ = strings.Cut(key, " ") // then "(expires ...)"
	waitHTTP(t, "http://"+addr+"/healthz")
	base := "http://" + addr + "/api/v1"
	call := func(method, path string, body any, out any) int {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("x-api-key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(out)
		return resp.StatusCode
	}
	var agent struct{ Data struct{ ID string } }
	if code := call("POST", "/agents", map[string]any{"name": "Ada", "type": "voice", "phoneNumbers": []string{"+14155550001"}}, &agent); code != 201 {
		t.Fatalf("create agent: %d", code)
	}
	var created struct{ Data struct{ ID, Status string } }
	if code := call("POST", "/calls/outbound", map[string]any{"agentId": agent.Data.ID, "phoneNumber": "+14155550100"}, &created); code != 201 {
		t.Fatalf("outbound: %d", code)
	}
	seen := []string{created.Data.Status}
	testkit.Within(15*time.Second, func() bool { // every status it passes through, until a final one
		var got struct{ Data struct{ Status string } }
		call("GET", "/calls/"+created.Data.ID, nil, &got)
		if s := got.Data.Status; s != seen[len(seen)-1] {
			seen = append(seen, s)
		}
		switch seen[len(seen)-1] {
		case "completed", "failed", "busy", "no_answer", "cancelled":
			return true
		}
		return false
	})
	if got := strings.Join(seen, " -> "); got != "queued -> connecting -> ringing -> active -> completed" {
		t.Fatalf("statuses %s; log:\n%s", got, logs.String())
	}
}
