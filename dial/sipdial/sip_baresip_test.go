package sipdial

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// baresip, Debian's softphone, runs headless as the far end: it answers
// by itself, speaks a tone from a wav file (aufile) and its sndfile module writes
// what it heard to snd/dump-*-dec.wav.
type baresip struct {
	dir  string
	addr string
}

func startBaresip(t *testing.T, speak float64, extra ...string) *baresip {
	t.Helper()
	bin, err := exec.LookPath("baresip")
	if err != nil {
		t.Skipf("baresip not installed: %v", err)
	}
	dir := t.TempDir()
	wav := filepath.Join(dir, "speak.wav")
	if err := os.WriteFile(wav, wavFile(sine(speak, 10*dial.SampleRate)), 0o644); err != nil {
		t.Fatal(err)
	}
	port := sipptest.FreePort(t)
	rtp := sipptest.FreePort(t)
	b := &baresip{dir: dir, addr: "127.0.0.1:" + strconv.Itoa(port)}
	cfg := strings.Join([]string{
		"poll_method epoll",
		"sip_listen " + b.addr,
		"audio_player aubridge,x",
		"audio_alert aubridge,x",
		"audio_source aufile," + wav,
		"audio_srate 8000",
		"audio_channels 1",
		"rtp_ports " + strconv.Itoa(rtp) + "-" + strconv.Itoa(rtp+20),
		"module_path /usr/lib/baresip/modules",
		"module g711.so",
		"module aufile.so",
		"module aubridge.so",
		"module sndfile.so",
		"snd_path " + filepath.Join(dir, "snd"),
		"module_app account.so",
		"module_app menu.so",
	}, "\n") + "\n"
	os.Mkdir(filepath.Join(dir, "snd"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	acc := "<sip:" + testCall.PhoneNumber + "@127.0.0.1>;regint=0;answermode=auto;audio_codecs=PCMU,PCMA\n"
	if err := os.WriteFile(filepath.Join(dir, "accounts"), []byte(acc), 0o644); err != nil {
		t.Fatal(err)
	}
	log, _ := os.Create(filepath.Join(dir, "baresip.log"))
	cmd := exec.Command(bin, append([]string{"-f", dir}, extra...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill() // by PID
		<-done
		if t.Failed() {
			out, _ := os.ReadFile(filepath.Join(dir, "baresip.log"))
			t.Logf("baresip log:\n%s", out)
		}
	})
	var out []byte
	if !testkit.Within(5*time.Second, func() bool {
		out, _ = os.ReadFile(filepath.Join(dir, "baresip.log"))
		return strings.Contains(string(out), "baresip is ready")
	}) {
		t.Fatalf("baresip did not start:\n%s", out)
	}
	return b
}

// wavFile is pcm as a 16-bit mono 8 kHz WAV file.
func wavFile(pcm []int16) []byte {
	b := make([]byte, 44, 44+2*len(pcm))
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*len(pcm)))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], dial.SampleRate)
	binary.LittleEndian.PutUint32(b[28:], 2*dial.SampleRate)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*len(pcm)))
	for _, v := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	return b
}

// heard reads the audio baresip received (its sndfile dump).
func (b *baresip) heard(t *testing.T) []int16 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(b.dir, "snd", "dump-*-dec.wav"))
	if len(files) != 1 {
		t.Fatalf("baresip dumps %v, want one decoded stream", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// RIFF chunks: find "data".
	for i := 12; i+8 <= len(raw); {
		id, n := string(raw[i:i+4]), int(binary.LittleEndian.Uint32(raw[i+4:i+8]))
		if id == "data" {
			body := raw[i+8 : min(i+8+n, len(raw))]
			pcm := make([]int16, len(body)/2)
			for k := range pcm {
				pcm[k] = int16(binary.LittleEndian.Uint16(body[2*k:]))
			}
			return pcm
		}
		i += 8 + n + n%2
	}
	t.Fatalf("%s: no data chunk", files[0])
	return nil
}

// An outbound call answered by baresip: the Talker hears baresip's
// 1000 Hz tone, baresip hears the Talker's 440 Hz tone.
func TestSIPMediaBaresipCallee(t *testing.T) {
	bs := startBaresip(t, 1000)
	talker := newEchoTalker(3 * time.Second)
	s := newTestSIP(t, bs.addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32700-32799" })
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
		rms, hz = toneHeard(bs.heard(t))
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
	bs := startBaresip(t, 1000, "-e", "/dial sip:+15550001111@"+s.LocalAddr())
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
		rms, hz = toneHeard(bs.heard(t))
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
	bs := startBaresip(t, 1000)
	talker := newEchoTalker(3500 * time.Millisecond)
	talker.send = "2#7"
	s := newTestSIP(t, bs.addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32900-32999" })
	if res, _ := dialOnce(t, s, context.Background(), &progressLog{}); res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v", res)
	}
	out, _ := os.ReadFile(filepath.Join(bs.dir, "baresip.log"))
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
