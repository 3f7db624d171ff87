package sipdial

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/baresiptest"
	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// baresip (internal/testkit/baresiptest) is the far end: it speaks a
// 1000 Hz tone and records what it heard.
func startBaresip(t *testing.T, extra ...string) *baresiptest.Phone {
	return baresiptest.Start(t, testCall.PhoneNumber, sine(1000, 10*dial.SampleRate), extra...)
}

// An outbound call answered by baresip: the Talker hears baresip's
// 1000 Hz tone, baresip hears the Talker's 440 Hz tone.
func TestSIPMediaBaresipCallee(t *testing.T) {
	bs := startBaresip(t)
	talker := newEchoTalker(3 * time.Second)
	s := newTestSIP(t, bs.Addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32700-32799" })
	res, _ := dialOnce(t, s, context.Background(), &progressLog{})
	if res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v", res)
	}
	talker.mu.Lock()
	rms, hz := toneHeard(talker.heard)
	talker.mu.Unlock()
	if rms < 2000 || hz < 950 || hz > 1050 {
		t.Errorf("the talker heard rms %.0f at %.0f Hz, want baresip's 1000 Hz tone", rms, hz)
	}
	testkit.Within(5*time.Second, func() bool { // baresip closes its dump on BYE
		rms, hz = toneHeard(bs.Heard(t))
		return rms >= 2000 && hz >= 420 && hz <= 460
	})
	if rms < 2000 || hz < 420 || hz > 460 {
		t.Errorf("baresip heard rms %.0f at %.0f Hz, want the talker's 440 Hz tone", rms, hz)
	}
}

// baresip calls an agent's number: the INVITE is answered and audio
// flows both ways.
func TestSIPMediaBaresipCaller(t *testing.T) {
	port := sipptest.FreePort(t)
	talker := newEchoTalker(3 * time.Second)
	s := newTestSIP(t, "127.0.0.1:9", func(c *Config) {
		c.ListenAddr = "127.0.0.1:" + strconv.Itoa(port)
		c.Talker = talker
		c.RTPPorts = "32800-32899"
	})
	in := &fakeInbound{done: make(chan struct{})}
	s.SetInbound(in)
	bs := startBaresip(t, "-e", "/dial sip:+15550001111@"+s.LocalAddr())
	select {
	case <-talker.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the call never reached the talker")
	}
	select {
	case <-in.done:
	case <-time.After(5 * time.Second):
		t.Fatal("inbound call never ended")
	}
	talker.mu.Lock()
	rms, hz := toneHeard(talker.heard)
	talker.mu.Unlock()
	if rms < 2000 || hz < 950 || hz > 1050 {
		t.Errorf("the talker heard rms %.0f at %.0f Hz, want baresip's 1000 Hz tone", rms, hz)
	}
	testkit.Within(5*time.Second, func() bool { // baresip closes its dump on BYE
		rms, hz = toneHeard(bs.Heard(t))
		return rms >= 2000 && hz >= 420 && hz <= 460
	})
	if rms < 2000 || hz < 420 || hz > 460 {
		t.Errorf("baresip heard rms %.0f at %.0f Hz, want the talker's 440 Hz tone", rms, hz)
	}
}

// Keys the agent presses (send_dtmf) reach a real softphone as RFC 4733
// telephone-events: baresip logs each event it received, begin and end,
// in order.
func TestSIPDigitsBaresipCallee(t *testing.T) {
	bs := startBaresip(t)
	talker := newEchoTalker(3500 * time.Millisecond)
	talker.send = "2#7"
	s := newTestSIP(t, bs.Addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32900-32999" })
	if res, _ := dialOnce(t, s, context.Background(), &progressLog{}); res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v", res)
	}
	out, _ := os.ReadFile(filepath.Join(bs.Dir, "baresip.log"))
	var got []string
	for _, ln := range strings.Split(string(out), "received event: '")[1:] {
		if strings.HasPrefix(ln[1:], "' (end=1)") {
			got = append(got, ln[:1])
		}
	}
	if strings.Join(got, "") != "2#7" {
		t.Errorf("baresip received DTMF %v, want 2 # 7\n%s", got, out)
	}
}
