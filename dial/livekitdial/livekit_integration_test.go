package livekitdial

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit"
)

// The integration test runs a real livekit-server (v1.13.5, `go install
// github.com/livekit/livekit-server/cmd/server@v1.13.5`, binary named
// `server`) with a real redis-server, both as child processes on loopback
// ports, and checks that rooms, agent dispatch, trunk listing and webhooks
// work for real, and that the SIP call - no SIP service is running - fails
// with a clear reason.

// lkNeed finds a binary or skips (fails under CI=true, where it must exist).
func lkNeed(t *testing.T, what string, candidates ...string) string {
	t.Helper()
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if strings.ContainsRune(c, os.PathSeparator) {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s not found (looked for %q); see README for the install commands", what, candidates)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func lkFreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lkStart starts a child process logging to dir/name.log and stops it by its
// PID when the test ends.
func lkStart(t *testing.T, dir, name string, bin string, args ...string) string {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			lkLogTail(t, name, logPath)
		}
	})
	return logPath
}

func lkLogTail(t *testing.T, name, path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	t.Logf("--- last lines of %s log:\n%s", name, strings.Join(lines, "\n"))
}

// lkWaitFor polls until ok returns true or the deadline passes.
func lkWaitFor(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	testkit.Eventually(t, limit, ok, "timed out waiting for %s", what)
}

// lkHook is the webhook receiver: every request goes through HandleWebhook.
type lkHook struct {
	mu     sync.Mutex
	l      *LiveKit
	events []WebhookEvent
	errs   []error
	last   struct {
		auth string
		body []byte
	}
}

func (h *lkHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	h.mu.Lock()
	l := h.l
	h.mu.Unlock()
	if l == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	ev, err := l.HandleWebhook(r.Context(), r.Header.Get("Authorization"), body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.errs = append(h.errs, err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h.events = append(h.events, ev)
	h.last.auth, h.last.body = r.Header.Get("Authorization"), body
	w.WriteHeader(http.StatusOK)
}

func (h *lkHook) has(event, room string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.events {
		if ev.Event == event && ev.RoomName == room {
			return true
		}
	}
	return false
}

func TestLiveKitIntegration(t *testing.T) {
	home, _ := os.UserHomeDir()
	lkBin := lkNeed(t, "livekit-server", os.Getenv("LIVEKIT_SERVER_BIN"), "livekit-server",
		filepath.Join(home, "go", "bin", "livekit-server"), filepath.Join(home, "go", "bin", "server"))
	redisBin := lkNeed(t, "redis-server", os.Getenv("REDIS_SERVER_BIN"), "redis-server", "/usr/bin/redis-server")
	if out, err := exec.Command(lkBin, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "livekit-server") {
		t.Fatalf("%s is not livekit-server: %s %v", lkBin, out, err)
	} else {
		t.Logf("using %s (%s), %s", lkBin, strings.TrimSpace(string(out)), redisBin)
	}
	dir := t.TempDir()

	redisPort := lkFreePort(t)
	lkStart(t, dir, "redis", redisBin, "--port", fmt.Sprint(redisPort), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	lkWaitFor(t, "redis", 10*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", redisPort))
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	hook := &lkHook{}
	hookSrv := httptest.NewServer(hook)
	defer hookSrv.Close()

	const key, secret = "agentdtestkey", "agentd-integration-secret-0123456789abcdef"
	httpPort, rtcTCP, rtcUDP := lkFreePort(t), lkFreePort(t), lkFreePort(t)
	conf := fmt.Sprintf(`port: %d
bind_addresses: ["127.0.0.1"]
rtc:
  tcp_port: %d
  udp_port: %d
  use_external_ip: false
  node_ip: 127.0.0.1
redis:
  address: 127.0.0.1:%d
keys:
  %s: %s
webhook:
  api_key: %s
  urls: [%q]
logging:
  level: info
`, httpPort, rtcTCP, rtcUDP, redisPort, key, secret, key, hookSrv.URL+"/api/v1/telephony/livekit/webhook")
	confPath := filepath.Join(dir, "livekit.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	lkStart(t, dir, "livekit", lkBin, "--dev", "--config", confPath)
	base := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	lkWaitFor(t, "livekit-server", 30*time.Second, func() bool {
		resp, err := http.Get(base + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})

	ctx := context.Background()
	// An outbound trunk to a SIP address where nothing listens: the call
	// cannot go anywhere anyway, since no livekit-sip service runs.
	admin := &lkClient{base: base, apiKey: key, apiSecret: secret, http: http.DefaultClient, now: time.Now}
	var trunk lkOutboundTrunk
	err := admin.call(ctx, "SIP/CreateSIPOutboundTrunk", grantSIPAdmin(), map[string]any{
		"trunk": map[string]any{"name": "agentd-it", "address": "127.0.0.1:5099", "numbers": []string{"+15550001111"}},
	}, &trunk, 10*time.Second)
	if err != nil || !strings.HasPrefix(trunk.SIPTrunkID, "ST_") {
		t.Fatalf("CreateSIPOutboundTrunk: %+v %v", trunk, err)
	}

	l, err := NewLiveKit(LiveKitConfig{
		URL: strings.Replace(base, "http://", "ws://", 1), APIKey: key, APISecret: secret,
		OutboundTrunkID: trunk.SIPTrunkID, AgentName: "agentd-test-agent",
		RingTimeout: 10 * time.Second, PollInterval: time.Second, HTTPTimeout: 10 * time.Second,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hook.mu.Lock()
	hook.l = l
	hook.mu.Unlock()

	if err := l.CheckTrunk(ctx); err != nil {
		t.Fatalf("CheckTrunk: %v", err)
	}

	var prog []dial.Progress
	c := lkTestCall
	res, err := l.Dial(ctx, c, func(p dial.Progress) { prog = append(prog, p) })
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Logf("result: %+v; progress: %+v", res, prog)
	if res.Status != dial.StatusFailed || !strings.Contains(res.Reason, "no SIP service answered") {
		t.Errorf("result %+v, want failed with the no-SIP-service reason", res)
	}
	if len(prog) != 2 || prog[0].Status != dial.StatusConnecting || prog[1].Status != dial.StatusRinging ||
		prog[0].RoomID != lkTestRoom || !strings.HasPrefix(prog[1].JobID, "AD_") {
		t.Errorf("progress %+v", prog)
	}

	// The room is gone (deleted on failure), and the webhooks LiveKit sent
	// passed verification.
	lkWaitFor(t, "room_finished webhook", 15*time.Second, func() bool { return hook.has("room_finished", lkTestRoom) })
	if !hook.has("room_started", lkTestRoom) {
		t.Error("no room_started webhook")
	}
	gone, err := l.calleeGone(ctx, lkTestRoom, lkTestIdentity)
	if err != nil || !gone {
		t.Errorf("room after failure: gone=%v err=%v", gone, err)
	}
	hook.mu.Lock()
	errs, auth, body := hook.errs, hook.last.auth, hook.last.body
	hook.mu.Unlock()
	if len(errs) > 0 {
		t.Errorf("webhooks refused: %v", errs)
	}
	// Replaying a genuine delivery is refused.
	if _, err := l.HandleWebhook(ctx, auth, body); !errors.Is(err, ErrWebhookReplay) {
		t.Errorf("replayed real webhook: %v", err)
	}

	// Polling requests are accepted by the real server: a room without the
	// callee counts as ended.
	if err := admin.call(ctx, "RoomService/CreateRoom", grantRoomCreate(), lkCreateRoomRequest{Name: "call-poll-1", EmptyTimeout: 30}, nil, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if gone, err := l.calleeGone(ctx, "call-poll-1", "sip-call-poll-1"); err != nil || !gone {
		t.Errorf("poll of an empty room: gone=%v err=%v", gone, err)
	}
	l.deleteRoom(ctx, "call-poll-1")
}
