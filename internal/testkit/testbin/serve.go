package testbin

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// KeyPrefix starts the one stdout line of a first run: the owner API key.
const KeyPrefix = "owner API key: "

// FreeAddr is a loopback address whose port was free a moment ago, for
// --addr of a child process (which cannot report a ":0" port back). The
// port is drawn at random below the kernel's ephemeral range: a port from
// ":0" is an ephemeral one, which another package's test server or any
// client's outgoing connection may take before the child binds it (a
// second server answering our /healthz was seen in CI).
func FreeAddr(t testing.TB) string {
	t.Helper()
	lo, hi := 10000, ephemeralLow()-1
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", lo+rand.IntN(hi-lo+1))
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux
// ip_local_port_range; 32768 elsewhere).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		var lo, hi int
		if _, err := fmt.Sscan(string(b), &lo, &hi); err == nil && lo > 12000 {
			return lo
		}
	}
	return 32768
}

// WaitHTTP polls url until it answers (any status) or limit passes, then
// fails the test.
func WaitHTTP(t testing.TB, url string, limit time.Duration) {
	t.Helper()
	if !answers(url, limit, nil) {
		t.Fatalf("%s never answered within %s", url, limit)
	}
}

// answers polls url until it answers, limit passes or exited is ready.
func answers(url string, limit time.Duration, exited <-chan struct{}) bool {
	deadline := time.Now().Add(limit)
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return true
		}
		select {
		case <-exited:
			return false
		default:
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Server is one `agentd serve` child process on a loopback port.
type Server struct {
	Addr string    // host:port it listens on
	URL  string    // "http://" + Addr
	Key  string    // owner API key printed on a first run, else ""
	Logs *Buffer   // everything it wrote to stderr
	Cmd  *exec.Cmd // the process
	Err  error     // how it exited, once Exited is closed

	args []string      // for failure messages
	done chan struct{} // closed when it exited, after Err is set
	read chan struct{} // closed when stdout reached its end
	mu   sync.Mutex    // guards out
	out  []string      // its stdout lines so far
}

// Proc is how to start a child process.
type Proc struct {
	Bin  string   // the binary (see Main, Build)
	Dir  string   // working directory; "" is the test's
	Addr string   // --addr; "" picks FreeAddr
	Env  []string // added to the test's environment (later entries win)
	Args []string // after "serve --addr Addr"
}

// Serve starts p.Bin serve --addr ... p.Args and waits up to 20 s until
// GET /healthz answers; it fails the test, with the log, if the process
// exits or never answers. The process is killed when the test ends.
func Serve(t testing.TB, p Proc) *Server {
	t.Helper()
	if p.Addr == "" {
		p.Addr = FreeAddr(t)
	}
	s := &Server{Addr: p.Addr, URL: "http://" + p.Addr, Logs: &Buffer{}, done: make(chan struct{}), read: make(chan struct{})}
	s.args = append([]string{"serve", "--addr", p.Addr}, p.Args...)
	s.Cmd = exec.Command(p.Bin, s.args...)
	s.Cmd.Dir = p.Dir
	s.Cmd.Env = append(os.Environ(), p.Env...)
	s.Cmd.Stderr = s.Logs
	stdout, err := s.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		defer close(s.read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.mu.Lock()
			s.out = append(s.out, sc.Text())
			if len(s.out) == 1 {
				first <- sc.Text()
			}
			s.mu.Unlock()
		}
	}()
	go func() {
		<-s.read // Wait closes the pipe: read it to the end first
		s.Err = s.Cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.Kill)
	if !answers(s.URL+"/healthz", 20*time.Second, s.done) {
		s.Kill()
		t.Fatalf("agentd %v did not answer within 20 s (exit %v)\n%s", s.args, s.Err, s.Logs.String())
	}
	select {
	case <-s.done: // another process answered on the port
		t.Fatalf("agentd %v exited (%v) while something answered on %s\n%s", s.args, s.Err, s.Addr, s.Logs.String())
	default:
	}
	// A first run prints the key before it listens: it is in the pipe now.
	select {
	case l := <-first:
		// "owner API key: agd_... (expires YYYY-MM-DD; make another with: ...)"
		s.Key, _ = strings.CutPrefix(l, KeyPrefix)
		s.Key, _, _ = strings.Cut(s.Key, " ")
	case <-time.After(100 * time.Millisecond):
	}
	return s
}

// Stdout is every line the process printed on stdout so far.
func (s *Server) Stdout() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.out...)
}

// Exited is closed when the process has exited; Err then holds how.
func (s *Server) Exited() <-chan struct{} { return s.done }

// Kill sends SIGKILL (no graceful stop) and waits up to 10 s for the
// process to go.
func (s *Server) Kill() {
	select {
	case <-s.done:
		return
	default:
	}
	s.Cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
}

// Stop sends SIGTERM and waits up to limit for the exit, which it returns.
func (s *Server) Stop(limit time.Duration) error {
	s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.Err
	case <-time.After(limit):
		return fmt.Errorf("no exit within %s of SIGTERM", limit)
	}
}

// Run runs bin with args in dir (env added to the test's) to the end and
// returns its stdout, stderr and exit error.
func Run(bin, dir string, env []string, args ...string) (stdout, stderr string, err error) {
	c := exec.Command(bin, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	return out.String(), errb.String(), err
}

// DialLog is the dials of a --dial-log file as "callID attempt", one per
// Dial, written before the dialer runs so a kill cannot lose it; nil
// when the file does not exist yet.
func DialLog(t testing.TB, path string) []string {
	t.Helper()
	var out []string
	for _, d := range Dials(t, path) {
		out = append(out, d.ID+" "+strconv.Itoa(d.Attempt))
	}
	return out
}

// Dial is one line of a --dial-log file.
type Dial struct {
	ID      string
	Attempt int
	At      time.Time // when the dial began
}

// Dials parses a --dial-log file ("callID attempt unixMicros" lines).
func Dials(t testing.TB, path string) []Dial {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []Dial
	for l := range strings.Lines(string(b)) {
		if !strings.HasSuffix(l, "\n") {
			// Being written as we read (each line is one write, so a kill
			// never leaves one unfinished): the next read has it whole.
			break
		}
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			t.Fatalf("%s: line %q: want callID attempt unixMicros", path, l)
		}
		n, err1 := strconv.Atoi(f[1])
		us, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: line %q: want callID attempt unixMicros", path, l)
		}
		out = append(out, Dial{ID: f[0], Attempt: n, At: time.UnixMicro(us)})
	}
	return out
}
