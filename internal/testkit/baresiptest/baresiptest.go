// Package baresiptest runs baresip, Debian's headless softphone, as the
// far end of one test's call: it answers by itself (or dials with -e),
// speaks a given 8 kHz recording through its aufile module and writes what
// it heard with sndfile. It is imported by tests only.
package baresiptest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/sipptest"
	"github.com/agentd/agentd/internal/wav"
)

// Phone is a running baresip.
type Phone struct {
	Dir  string
	Addr string // 127.0.0.1:port it takes SIP on
}

// Start runs baresip answering calls for number, speaking speak (8 kHz
// mono; it falls silent when the recording ends), with extra arguments
// (for example "-e", "/dial sip:..."). It is killed by its PID when the
// test ends; the test is skipped when baresip is not installed.
func Start(t testing.TB, number string, speak []int16, extra ...string) *Phone {
	t.Helper()
	bin, err := exec.LookPath("baresip")
	if err != nil {
		t.Skipf("baresip not installed (apt-get install baresip-core): %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "speak.wav")
	if err := os.WriteFile(src, wav.Encode(wav.Format{Rate: 8000, Channels: 1}, speak), 0o644); err != nil {
		t.Fatal(err)
	}
	port, rtp := sipptest.FreePort(t), sipptest.FreePort(t)
	p := &Phone{Dir: dir, Addr: "127.0.0.1:" + strconv.Itoa(port)}
	cfg := strings.Join([]string{
		"poll_method epoll",
		"sip_listen " + p.Addr,
		"audio_player aubridge,x",
		"audio_alert aubridge,x",
		"audio_source aufile," + src,
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
	acc := "<sip:" + number + "@127.0.0.1>;regint=0;answermode=auto;audio_codecs=PCMU,PCMA\n"
	for name, body := range map[string]string{"config": cfg, "accounts": acc} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(dir, "baresip.log")
	log, _ := os.Create(logPath)
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
			out, _ := os.ReadFile(logPath)
			t.Logf("baresip log:\n%s", out)
		}
	})
	for deadline := time.Now().Add(5 * time.Second); ; {
		out, _ := os.ReadFile(logPath)
		if bytes.Contains(out, []byte("baresip is ready")) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("baresip did not start:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond) // polling baresip's log: it has no other ready signal
	}
}

// Heard is the audio baresip received on its one call (its sndfile dump),
// waiting up to 2 s for the file to be complete after the call ended.
func (p *Phone) Heard(t testing.TB) []int16 {
	t.Helper()
	var last error
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) { // sndfile closes its dump after BYE
		files, _ := filepath.Glob(filepath.Join(p.Dir, "snd", "dump-*-dec.wav"))
		if len(files) != 1 {
			continue
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			last = err
			continue
		}
		pcm, _, err := wav.ReadAll(bytes.NewReader(raw))
		if err == nil && len(pcm) > 0 {
			return pcm
		}
		last = err
	}
	t.Fatalf("baresip's dump of what it heard: %v", last)
	return nil
}
