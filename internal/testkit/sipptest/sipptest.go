// Package sipptest runs sipp, the SIP test tool, as the callee of one test.
// The SIP dialer's tests (dial), the HTTP tests (app) and the CLI tests
// (cmd) all place real calls against it, so they share this one runner.
// It is imported by tests only.
package sipptest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
)

// Options change how sipp runs; the zero value is a UDP callee taking any
// number of calls.
type Options struct {
	Calls int      // > 0: sipp exits after this many calls (see Wait)
	Args  []string // more sipp flags, e.g. "-t", "t1" for TCP
}

// Proc is a running sipp callee.
type Proc struct {
	Addr    string // 127.0.0.1:port sipp listens on
	LogFile string // -trace_logs output: the scenario's <log> actions
	MsgFile string // -trace_msg output: every SIP message, timestamped
	errFile string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// Start runs sipp as the callee of testdata/sipp/<scenario>.xml on a free
// loopback port and returns once sipp holds it. sipp is killed by its PID
// when the test ends. The test is skipped when sipp is not installed
// (Debian package sip-tester; .ci/run installs it).
func Start(t testing.TB, scenario string, opt Options) *Proc {
	t.Helper()
	bin, err := exec.LookPath("sipp")
	if err != nil {
		t.Skipf("sipp not installed (apt-get install sip-tester): %v", err)
	}
	sf := Scenario(t, scenario)
	tcp := false
	for _, a := range opt.Args {
		tcp = tcp || a == "t1" || a == "tn"
	}
	// The free port FreePort found may be taken by another test package
	// before sipp binds it (tests run in parallel): sipp then exits at
	// once, and another port is tried.
	for try := 1; ; try++ {
		p, port := startOn(t, bin, sf, opt)
		if err := p.waitReady(port, tcp); err == nil {
			return p
		} else if b, _ := os.ReadFile(p.errFile); !strings.Contains(string(b), "Unable to bind") || try == 5 {
			p.logErrors(t)
			t.Fatal(err)
		}
	}
}

// startOn runs sipp on a free port; it is killed when the test ends.
func startOn(t testing.TB, bin, sf string, opt Options) (*Proc, int) {
	t.Helper()
	port := FreePort(t)
	dir := t.TempDir()
	p := &Proc{
		Addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		LogFile: filepath.Join(dir, "sipp.log"),
		MsgFile: filepath.Join(dir, "messages.log"),
		errFile: filepath.Join(dir, "sipp_errors.log"),
		done:    make(chan struct{}),
	}
	args := []string{"-sf", sf, "-i", "127.0.0.1", "-p", strconv.Itoa(port), "-nostdin",
		"-trace_err", "-error_file", p.errFile, "-trace_logs", "-log_file", p.LogFile,
		"-trace_msg", "-message_file", p.MsgFile}
	if opt.Calls > 0 {
		args = append(args, "-m", strconv.Itoa(opt.Calls))
	}
	args = append(args, opt.Args...)
	out, err := os.Create(filepath.Join(dir, "sipp.out"))
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start sipp: %v", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill() // by PID, never by name
			<-p.done
		}
		if t.Failed() {
			p.logErrors(t)
		}
	})
	return p, port
}

// Scenario is the absolute path of testdata/sipp/<name>.xml, found from the
// module root so that tests of any package can use it.
func Scenario(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("sipptest: go.mod not found above the test's directory")
		}
		dir = parent
	}
	sf := filepath.Join(dir, "testdata", "sipp", name+".xml")
	if _, err := os.Stat(sf); err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return sf
}

// FreePort finds a loopback port free for both UDP and TCP.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		l.Close()
		if testRTP(port) {
			if err == nil {
				u.Close()
			}
			continue
		}
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// WaitBound waits until a process holds UDP port on 127.0.0.1 (a sipp
// started by hand binds its port some time after it starts): binding the
// port fails then. It fails the test after 5 s.
func WaitBound(t testing.TB, port int) {
	t.Helper()
	if !testkit.Within(5*time.Second, func() bool {
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err == nil {
			u.Close()
		}
		return err != nil
	}) {
		t.Fatalf("nothing bound UDP port %d within 5 s", port)
	}
}

// waitReady waits until sipp holds its port; an error when sipp exited
// first or never bound it.
func (p *Proc) waitReady(port int, tcp bool) error {
	bound := func() bool {
		if tcp {
			// Probe by binding, not connecting: sipp's single-socket TCP
			// mode would take a probe connection for the call's.
			l, err := net.Listen("tcp", p.Addr)
			if err == nil {
				l.Close()
			}
			return err != nil
		}
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err == nil {
			u.Close()
		}
		return err != nil
	}
	exited := false
	testkit.Within(5*time.Second, func() bool {
		select {
		case <-p.done:
			exited = true
			return true
		default:
		}
		return bound()
	})
	switch {
	case exited:
		return fmt.Errorf("sipp exited at start: %v", p.waitErr)
	case !bound():
		return errors.New("sipp did not bind its port within 5s")
	}
	return nil
}

// Wait waits for a sipp started with Options.Calls to exit and returns its
// exit code: 0 means every call followed the scenario.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("sipp still running after %v", timeout)
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ExitCode()
	}
	if p.waitErr != nil {
		t.Fatalf("sipp: %v", p.waitErr)
	}
	return 0
}

// Invites returns when sipp received each call's first INVITE, in order,
// from its message trace ("----- 2026-01-02 15:04:05.123456", then "UDP
// message received", then the request line). Retransmissions (same
// Call-ID) are left out.
func (p *Proc) Invites(t testing.TB) []time.Time {
	t.Helper()
	f, err := os.Open(p.MsgFile)
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

func (p *Proc) logErrors(t testing.TB) {
	if b, err := os.ReadFile(p.errFile); err == nil && len(b) > 0 {
		t.Logf("sipp errors:\n%s", b)
	}
}

// testRTP reports whether port lies in the RTP ranges tests give their
// media sessions (--rtp-ports 3xxxx, NewPorts 4xxxx): those are bound
// from their start, by tests of other packages running meanwhile.
func testRTP(port int) bool {
	return port >= 30000 && port < 34000 || port >= 40000 && port < 43200
}
