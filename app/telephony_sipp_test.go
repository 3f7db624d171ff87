package app

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// telSipp is a sipp callee run as a child process for one test, with its
// SIP message trace (timestamps of every message it received).
type telSipp struct {
	addr    string // 127.0.0.1:port
	msgFile string
	errFile string
	done    chan struct{}
}

// startTelSipp starts sipp as the callee of testdata/sipp/<scenario>.xml on
// a free loopback UDP port with no call limit; it is killed by its PID when
// the test ends. The test is skipped when sipp is missing (Debian package
// sip-tester; .ci/run installs it).
func startTelSipp(t *testing.T, scenario string) *telSipp {
	t.Helper()
	bin, err := exec.LookPath("sipp")
	if err != nil {
		t.Skipf("sipp not installed (apt-get install sip-tester): %v", err)
	}
	sf, err := filepath.Abs(filepath.Join("..", "testdata", "sipp", scenario+".xml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sf); err != nil {
		t.Fatalf("scenario: %v", err)
	}
	dir := t.TempDir()
	port := telFreeUDPPort(t)
	p := &telSipp{
		addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		msgFile: filepath.Join(dir, "messages.log"),
		errFile: filepath.Join(dir, "errors.log"),
		done:    make(chan struct{}),
	}
	out, err := os.Create(filepath.Join(dir, "sipp.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-sf", sf, "-i", "127.0.0.1", "-p", strconv.Itoa(port), "-nostdin",
		"-trace_msg", "-message_file", p.msgFile, "-trace_err", "-error_file", p.errFile)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start sipp: %v", err)
	}
	go func() {
		cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill() // by PID
			<-p.done
		}
		if b, err := os.ReadFile(p.errFile); t.Failed() && err == nil && len(b) > 0 {
			t.Logf("sipp errors:\n%s", b)
		}
	})
	// Ready once sipp holds its port.
	for deadline := time.Now().Add(5 * time.Second); ; {
		select {
		case <-p.done:
			t.Fatal("sipp exited at start")
		default:
		}
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			return p
		}
		u.Close()
		if time.Now().After(deadline) {
			t.Fatal("sipp did not bind its port within 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func telFreeUDPPort(t *testing.T) int {
	t.Helper()
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	return u.LocalAddr().(*net.UDPAddr).Port
}

// invites returns when sipp received each call's first INVITE, in order,
// from its message trace ("----- 2026-01-02 15:04:05.123456" then "UDP
// message received", then the request line). Retransmissions (same Call-ID)
// are left out.
func (p *telSipp) invites(t *testing.T) []time.Time {
	t.Helper()
	f, err := os.Open(p.msgFile)
	if err != nil {
		t.Fatalf("sipp message trace: %v", err)
	}
	defer f.Close()
	var out []time.Time
	seen := map[string]bool{}
	var stamp time.Time
	var received, invite bool
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "-----"):
			ts := strings.TrimSpace(strings.TrimLeft(line, "- "))
			stamp, err = time.Parse("2006-01-02 15:04:05.000000", ts)
			if err != nil {
				t.Fatalf("sipp trace timestamp %q: %v", ts, err)
			}
			received, invite = false, false
		case strings.Contains(line, "message received"):
			received = true
		case received && strings.HasPrefix(line, "INVITE "):
			invite = true
		case invite && strings.HasPrefix(strings.ToLower(line), "call-id:"):
			id := strings.TrimSpace(line[len("call-id:"):])
			if !seen[id] {
				seen[id] = true
				out = append(out, stamp)
			}
			invite = false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
