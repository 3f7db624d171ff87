package dial

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// sippProc is a sipp callee run as a child process for one test.
type sippProc struct {
	Addr    string // host:port sipp listens on
	LogFile string // sipp's -trace_logs output (<log> actions)
	errFile string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// startSipp starts sipp as the callee of testdata/sipp/<scenario>.xml on a
// free loopback UDP port, with no call limit, and returns its host:port.
// Any number of calls, concurrent or not, can be placed against it; it is
// killed (by PID) when the test ends. The test is skipped when sipp is not
// installed (Debian package sip-tester).
func startSipp(t testing.TB, scenario string) (addr string) {
	return runSipp(t, scenario, 0).Addr
}

// runSipp starts sipp like startSipp; calls > 0 makes it exit after that
// many calls (see wait). extra are more sipp flags, e.g. "-t", "t1".
func runSipp(t testing.TB, scenario string, calls int, extra ...string) *sippProc {
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
	tcp := false
	for _, a := range extra {
		tcp = tcp || a == "t1" || a == "tn"
	}
	port := freePort(t)
	dir := t.TempDir()
	p := &sippProc{
		Addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		LogFile: filepath.Join(dir, "sipp.log"),
		errFile: filepath.Join(dir, "sipp_errors.log"),
		done:    make(chan struct{}),
	}
	args := []string{"-sf", sf, "-i", "127.0.0.1", "-p", strconv.Itoa(port), "-nostdin",
		"-trace_err", "-error_file", p.errFile, "-trace_logs", "-log_file", p.LogFile}
	if calls > 0 {
		args = append(args, "-m", strconv.Itoa(calls))
	}
	args = append(args, extra...)
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
	p.waitReady(t, port, tcp)
	return p
}

// freePort finds a loopback port free for both UDP and TCP.
func freePort(t testing.TB) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// waitReady waits until sipp holds its port (or exits early).
func (p *sippProc) waitReady(t testing.TB, port int, tcp bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			p.logErrors(t)
			t.Fatalf("sipp exited at start: %v", p.waitErr)
		default:
		}
		if tcp {
			// Probe by binding, not connecting: sipp's single-socket TCP
			// mode would take a probe connection for the call's.
			l, err := net.Listen("tcp", p.Addr)
			if err != nil {
				return // bound by sipp
			}
			l.Close()
		} else {
			u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
			if err != nil {
				return // bound by sipp
			}
			u.Close()
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("sipp did not bind its port within 5s")
}

// wait waits for a sipp started with a call limit to exit and returns its
// exit code: 0 means every call followed the scenario.
func (p *sippProc) wait(t testing.TB, timeout time.Duration) int {
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

func (p *sippProc) logErrors(t testing.TB) {
	if b, err := os.ReadFile(p.errFile); err == nil && len(b) > 0 {
		t.Logf("sipp errors:\n%s", b)
	}
}
