package sipdial

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// newTestSIP starts a SIP dialer against trunk; edit may change the config.
func newTestSIP(t *testing.T, trunk string, edit func(*Config)) *Dialer {
	t.Helper()
	cfg := Config{Trunk: trunk, RingTimeout: 5 * time.Second, ResponseTimeout: 2 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := New(cfg, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// progressLog records what Dial reports and can act on a status.
type progressLog struct {
	mu       sync.Mutex
	statuses []string
	ids      []string
	rooms    []string
	on       map[string]func()
}

func (p *progressLog) report(pr dial.Progress) {
	p.mu.Lock()
	p.statuses = append(p.statuses, pr.Status)
	p.ids = append(p.ids, pr.SIPParticipantID)
	p.rooms = append(p.rooms, pr.RoomID)
	f := p.on[pr.Status]
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

// check asserts the exact status sequence, one Call-ID and no room.
func (p *progressLog) check(t *testing.T, want ...string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Equal(p.statuses, want) {
		t.Errorf("progress = %v, want %v", p.statuses, want)
	}
	for i, id := range p.ids {
		if id == "" || id != p.ids[0] {
			t.Errorf("progress %d SIPParticipantID = %q, want the dial.Call-ID %q", i, id, p.ids[0])
		}
		if p.rooms[i] != "" {
			t.Errorf("progress %d RoomID = %q, want empty", i, p.rooms[i])
		}
	}
}

var testCall = dial.Call{ID: "call-1", Attempt: 1, PhoneNumber: "+15551230001", CallerID: "+15559870000"}

func dialOnce(t *testing.T, s *Dialer, ctx context.Context, p *progressLog) (dial.Result, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := s.Dial(ctx, testCall, p.report)
	if err != nil {
		t.Fatalf("Dial error: %v", err)
	}
	return res, time.Since(start)
}

func wantResult(t *testing.T, got, want dial.Result) {
	t.Helper()
	got.Duration, want.Duration = 0, 0
	if got != want {
		t.Errorf("dial.Result = %+v, want %+v", got, want)
	}
}

func TestSIPAnswerThenHangup(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "answer_hangup", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	var p progressLog
	res, _ := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting, dial.StatusRinging, dial.StatusActive)
	wantResult(t, res, dial.Result{Status: dial.StatusCompleted, SIPCode: 200})
	if res.Duration < 900*time.Millisecond || res.Duration > 2500*time.Millisecond {
		t.Errorf("Duration = %v, want about 1s (sipp hangs up 1s after ACK)", res.Duration)
	}
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0 (call followed the scenario)", code)
	}
}

func TestSIPAnswerThenHangupTCP(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "answer_hangup", sipptest.Options{Calls: 1, Args: []string{"-t", "t1"}})
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.Transport = "TCP" })
	var p progressLog
	res, _ := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting, dial.StatusRinging, dial.StatusActive)
	wantResult(t, res, dial.Result{Status: dial.StatusCompleted, SIPCode: 200})
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0", code)
	}
}

func TestSIPCancelWhileActive(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "answer_wait_bye", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := progressLog{on: map[string]func(){dial.StatusActive: func() { time.AfterFunc(300*time.Millisecond, cancel) }}}
	res, _ := dialOnce(t, s, ctx, &p)
	p.check(t, dial.StatusConnecting, dial.StatusRinging, dial.StatusActive)
	wantResult(t, res, dial.Result{Status: dial.StatusCancelled, SIPCode: 200})
	if res.Duration < 250*time.Millisecond || res.Duration > 2*time.Second {
		t.Errorf("Duration = %v, want about 300ms", res.Duration)
	}
	// sipp exits 0 only once it has received our BYE and answered it.
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0 (BYE received)", code)
	}
}

func TestSIPCloseHangsUpActiveCall(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "answer_wait_bye", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	p := progressLog{on: map[string]func(){dial.StatusActive: func() { go s.Close() }}}
	res, _ := dialOnce(t, s, t.Context(), &p)
	wantResult(t, res, dial.Result{Status: dial.StatusCancelled, SIPCode: 200})
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0 (BYE received)", code)
	}
	if _, err := s.Dial(t.Context(), testCall, nil); !errors.Is(err, errSIPClosed) {
		t.Errorf("Dial after Close: err = %v, want errSIPClosed", err)
	}
}

func TestSIPBusy(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "busy", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	var p progressLog
	res, _ := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting, dial.StatusRinging)
	wantResult(t, res, dial.Result{Status: dial.StatusBusy, SIPCode: 486})
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0 (ACK received)", code)
	}
}

func TestSIPRingThen480(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "ring_480", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	var p progressLog
	res, _ := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting, dial.StatusRinging)
	wantResult(t, res, dial.Result{Status: dial.StatusNoAnswer, SIPCode: 480})
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0", code)
	}
}

func TestSIPNotFound(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "not_found", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	var p progressLog
	res, _ := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting)
	wantResult(t, res, dial.Result{Status: dial.StatusFailed, SIPCode: 404, Reason: "SIP 404 Not Found"})
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0", code)
	}
}

func TestSIPRetryAfter(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "retry_after", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	var p progressLog
	_, err := s.Dial(t.Context(), testCall, p.report)
	if !errors.Is(err, dial.ErrRetryLater) || !strings.Contains(err.Error(), "SIP 503 Service Unavailable") {
		t.Errorf("err = %v, want dial.ErrRetryLater with SIP 503", err)
	}
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0", code)
	}
}

func TestSIPRingTimeoutSendsCancel(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "ring_forever", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.RingTimeout = time.Second })
	var p progressLog
	res, took := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting, dial.StatusRinging)
	wantResult(t, res, dial.Result{Status: dial.StatusNoAnswer, SIPCode: 487})
	if took < time.Second || took > 2500*time.Millisecond {
		t.Errorf("Dial took %v, want about the 1s ring timeout", took)
	}
	// sipp exits 0 only after CANCEL, its 487 and our ACK.
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0 (CANCEL received)", code)
	}
}

func TestSIPCancelWhileRinging(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "ring_forever", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := progressLog{on: map[string]func(){dial.StatusRinging: cancel}}
	res, took := dialOnce(t, s, ctx, &p)
	p.check(t, dial.StatusConnecting, dial.StatusRinging)
	wantResult(t, res, dial.Result{Status: dial.StatusCancelled, SIPCode: 487})
	if took > 2*time.Second {
		t.Errorf("Dial took %v after cancel, want well under the 5s ring timeout", took)
	}
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0 (CANCEL received)", code)
	}
}

func TestSIPNothingListening(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for the response timeout")
	}
	addr := "127.0.0.1:" + strconv.Itoa(sipptest.FreePort(t))
	t.Run("udp", func(t *testing.T) {
		t.Parallel()
		s := newTestSIP(t, addr, func(c *Config) { c.ResponseTimeout = time.Second })
		var p progressLog
		res, took := dialOnce(t, s, t.Context(), &p)
		p.check(t, dial.StatusConnecting)
		wantResult(t, res, dial.Result{Status: dial.StatusFailed, Reason: "no response from trunk"})
		if took < time.Second || took > 2500*time.Millisecond {
			t.Errorf("Dial took %v, want about the 1s response timeout (not Timer B)", took)
		}
	})
	t.Run("tcp", func(t *testing.T) {
		t.Parallel()
		s := newTestSIP(t, addr, func(c *Config) { c.Transport = "tcp" })
		var p progressLog
		res, took := dialOnce(t, s, t.Context(), &p)
		p.check(t)
		if res.Status != dial.StatusFailed || !strings.HasPrefix(res.Reason, "trunk unreachable: ") ||
			!strings.Contains(res.Reason, "refused") {
			t.Errorf("dial.Result = %+v, want failed, trunk unreachable: connection refused", res)
		}
		if took > time.Second {
			t.Errorf("Dial took %v, want an immediate failure", took)
		}
	})
}

func TestSIPDigestAuth(t *testing.T) {
	t.Parallel()
	sipp := sipptest.Start(t, "auth", sipptest.Options{Calls: 1})
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.Username, c.Password = "agentd", "s3cret" })
	var p progressLog
	res, _ := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting, dial.StatusActive)
	wantResult(t, res, dial.Result{Status: dial.StatusCompleted, SIPCode: 200})
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Fatalf("sipp exit code %d, want 0", code)
	}
	// Debian's sipp cannot verify digests: check the one it logged.
	log, err := os.ReadFile(sipp.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`AUTH\s*Digest (.*)`).FindSubmatch(log)
	if m == nil {
		t.Fatalf("no Authorization header in sipp log:\n%s", log)
	}
	f := map[string]string{}
	for _, kv := range regexp.MustCompile(`(\w+)="?([^",]*)"?`).FindAllStringSubmatch(string(m[1]), -1) {
		f[kv[1]] = kv[2]
	}
	md5hex := func(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }
	ha1 := md5hex("agentd:agentd.test:s3cret")
	ha2 := md5hex("INVITE:" + f["uri"])
	want := md5hex(ha1 + ":" + f["nonce"] + ":" + ha2)
	if f["username"] != "agentd" || f["realm"] != "agentd.test" || f["nonce"] != "n0nce1" ||
		f["uri"] != "sip:+15551230001@"+sipp.Addr || f["response"] != want {
		t.Errorf("Authorization %q: fields %v, want response %s", m[1], f, want)
	}
}

func TestSIPAuthChallengeWithoutCredentials(t *testing.T) {
	t.Parallel()
	addr := sipptest.Start(t, "auth", sipptest.Options{}).Addr
	s := newTestSIP(t, addr, nil)
	var p progressLog
	res, _ := dialOnce(t, s, t.Context(), &p)
	p.check(t, dial.StatusConnecting)
	wantResult(t, res, dial.Result{Status: dial.StatusFailed, SIPCode: 401, Reason: "SIP 401 Unauthorized"})
}

// TestSIPConcurrentPaced places 20 calls paced at 5 per second against one
// sipp: the shared client handles concurrent dialogs and every call
// completes. Not parallel with the other sipp tests: a starved sipp
// mistimes its scenario.
func TestSIPConcurrentPaced(t *testing.T) {
	if testing.Short() {
		t.Skip("places 20 calls over 4s")
	}
	const n = 20
	sipp := sipptest.Start(t, "answer_hangup", sipptest.Options{Calls: n})
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.RingTimeout, c.ResponseTimeout = 15*time.Second, 5*time.Second })
	tick := time.NewTicker(time.Second / 5)
	defer tick.Stop()
	var wg sync.WaitGroup
	results := make([]dial.Result, n)
	logs := make([]progressLog, n)
	start := time.Now()
	for i := range n {
		if i > 0 {
			<-tick.C
		}
		wg.Go(func() {
			c := testCall
			c.ID = "call-" + strconv.Itoa(i)
			res, err := s.Dial(t.Context(), c, logs[i].report)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			results[i] = res
		})
	}
	dialed := time.Since(start)
	wg.Wait()
	ids := map[string]bool{}
	for i := range n {
		if results[i].Status != dial.StatusCompleted {
			t.Errorf("call %d: %+v, want completed", i, results[i])
		}
		logs[i].check(t, dial.StatusConnecting, dial.StatusRinging, dial.StatusActive)
		if len(logs[i].ids) > 0 {
			ids[logs[i].ids[0]] = true
		}
	}
	if len(ids) != n {
		t.Errorf("%d distinct dial.Call-IDs, want %d", len(ids), n)
	}
	t.Logf("20 calls dialled in %v, all done in %v", dialed, time.Since(start))
	if code := sipp.Wait(t, 5*time.Second); code != 0 {
		t.Errorf("sipp exit code %d, want 0 (all %d calls followed the scenario)", code, n)
	}
}
