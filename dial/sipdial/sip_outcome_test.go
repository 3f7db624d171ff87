package sipdial

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/emiago/sipgo/sip"
)

func parseSIPResponse(t testing.TB, raw string) *sip.Response {
	t.Helper()
	msg, err := sip.ParseMessage([]byte(strings.ReplaceAll(raw, "\n", "\r\n")))
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	res, ok := msg.(*sip.Response)
	if !ok {
		t.Fatalf("not a response: %q", raw)
	}
	return res
}

func sipResponseText(code, reason, extra string) string {
	return "SIP/2.0 " + code + " " + reason + "\n" +
		"Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1\n" +
		"From: <sip:+1555@x>;tag=a\nTo: <sip:+1666@x>;tag=b\nCall-ID: c1\nCSeq: 1 INVITE\n" +
		extra + "Content-Length: 0\n\n"
}

func TestSIPFinalResult(t *testing.T) {
	cases := []struct {
		code, reason, extra string
		want                dial.Result
		retry               bool
	}{
		{"486", "Busy Here", "", dial.Result{Status: dial.StatusBusy, SIPCode: 486}, false},
		{"408", "Request Timeout", "", dial.Result{Status: dial.StatusNoAnswer, SIPCode: 408}, false},
		{"480", "Temporarily Unavailable", "", dial.Result{Status: dial.StatusNoAnswer, SIPCode: 480}, false},
		{"487", "Request Terminated", "", dial.Result{Status: dial.StatusNoAnswer, SIPCode: 487}, false},
		{"404", "Not Found", "", dial.Result{Status: dial.StatusFailed, SIPCode: 404, Reason: "SIP 404 Not Found"}, false},
		{"603", "Decline", "", dial.Result{Status: dial.StatusFailed, SIPCode: 603, Reason: "SIP 603 Decline"}, false},
		{"503", "Service Unavailable", "", dial.Result{Status: dial.StatusFailed, SIPCode: 503, Reason: "SIP 503 Service Unavailable"}, false},
		{"503", "Service Unavailable", "Retry-After: 30\n", dial.Result{}, true},
		{"403", "Too Many Calls", "", dial.Result{}, true},
		{"480", "CPS Limit Exceeded", "", dial.Result{}, true},
	}
	for _, c := range cases {
		t.Run(c.code+" "+c.reason, func(t *testing.T) {
			got, err := sipFinalResult(parseSIPResponse(t, sipResponseText(c.code, c.reason, c.extra)))
			if c.retry {
				if !errors.Is(err, dial.ErrRetryLater) || !strings.Contains(err.Error(), "SIP "+c.code) {
					t.Errorf("err = %v, want dial.ErrRetryLater naming SIP %s", err, c.code)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestValidSIPNumber(t *testing.T) {
	for n, want := range map[string]bool{
		"+15551230001": true, "15551230001": true, "+1": true,
		"": false, "+": false, "+1 555": false, "+1555\r\nX: y": false, "alice": false,
		"+123456789012345678901": false, "+1555;user=phone": false, "+1555@evil": false,
	} {
		if got := validSIPNumber(n); got != want {
			t.Errorf("validSIPNumber(%q) = %v, want %v", n, got, want)
		}
	}
}

func TestNewSIPConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Trunk: "127.0.0.1:0"},
		{Trunk: "127.0.0.1:99999"},
		{Trunk: "127.0.0.1:sip"},
		{Trunk: "127.0.0.1:5060", Transport: "tls"},
		{Trunk: "127.0.0.1:5060", ListenAddr: "not an address"},
		{Trunk: "127.0.0.1:5060", RTPPorts: "10000"},
		{Trunk: "127.0.0.1:5060", RTPPorts: "10001-10001"},
		{Trunk: "127.0.0.1:5060", PublicAddr: "0.0.0.0"},
		{Trunk: "127.0.0.1:5060", PublicAddr: "pbx.example.com"},
	} {
		if s, err := New(cfg, nil); err == nil {
			s.Close()
			t.Errorf("New(%+v) accepted", cfg)
		}
	}

	s, err := New(Config{Trunk: "127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.cfg
	if s.trunkPort != 5060 || c.Transport != "udp" || c.FromDomain != "127.0.0.1" ||
		c.RingTimeout != DefaultRingTimeout || c.ResponseTimeout != DefaultResponseTimeout ||
		c.MaxCallDuration != DefaultMaxCallDuration || c.ListenAddr != "127.0.0.1:0" ||
		s.host != "127.0.0.1" || s.port == 0 || s.Name() != "sip" {
		t.Errorf("defaults: %+v host %s:%d trunk port %d", c, s.host, s.port, s.trunkPort)
	}
}

func TestSIPDialRejectsBadNumbers(t *testing.T) {
	s, err := New(Config{Trunk: "127.0.0.1:9"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []dial.Call{
		{PhoneNumber: "+1555\r\nX-Injected: 1", CallerID: "+1666"},
		{PhoneNumber: "+15551230001", CallerID: "sip:evil@host"},
	} {
		called := false
		res, err := s.Dial(t.Context(), c, func(dial.Progress) { called = true })
		if err != nil || res.Status != dial.StatusFailed || !strings.HasPrefix(res.Reason, "invalid ") || called {
			t.Errorf("Dial(%q, %q) = %+v, %v (progress %v), want failed invalid without progress",
				c.PhoneNumber, c.CallerID, res, err, called)
		}
	}
}

// FuzzSIPFinalResult feeds arbitrary trunk answers through sipgo's parser
// and the outcome mapping: never a panic, always a known outcome.
func FuzzSIPFinalResult(f *testing.F) {
	f.Add([]byte(strings.ReplaceAll(sipResponseText("486", "Busy Here", ""), "\n", "\r\n")))
	f.Add([]byte(strings.ReplaceAll(sipResponseText("503", "Service Unavailable", "Retry-After: 5\n"), "\n", "\r\n")))
	f.Add([]byte(strings.ReplaceAll(sipResponseText("699", "", ""), "\n", "\r\n")))
	f.Add([]byte("SIP/2.0 404 Not Found\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		msg, err := sip.ParseMessage(raw)
		if err != nil {
			return
		}
		res, ok := msg.(*sip.Response)
		if !ok || res.StatusCode < 300 {
			return
		}
		got, err := sipFinalResult(res)
		if err != nil {
			if !errors.Is(err, dial.ErrRetryLater) {
				t.Fatalf("error %v is not dial.ErrRetryLater", err)
			}
			return
		}
		switch got.Status {
		case dial.StatusBusy, dial.StatusNoAnswer:
		case dial.StatusFailed:
			if !strings.HasPrefix(got.Reason, "SIP ") {
				t.Fatalf("failed reason %q", got.Reason)
			}
		default:
			t.Fatalf("status %q", got.Status)
		}
		if got.SIPCode != res.StatusCode {
			t.Fatalf("SIPCode %d, want %d", got.SIPCode, res.StatusCode)
		}
	})
}

// FuzzSIPInvite checks that any number the dialer accepts yields an INVITE
// that parses back with the same callee and caller.
func FuzzSIPInvite(f *testing.F) {
	f.Add("+15551230001", "+15559870000")
	f.Add("+1555\r\nX: y", "")
	f.Add("0044", "+1")
	s := &Dialer{cfg: Config{FromDomain: "agentd.test", Transport: "udp"}, trunkHost: "127.0.0.1", trunkPort: 5060, host: "127.0.0.1", port: 5070}
	s.contactHd = sip.ContactHeader{Address: sip.Uri{Scheme: "sip", User: "agentd", Host: "127.0.0.1", Port: 5070}}
	f.Fuzz(func(t *testing.T, number, caller string) {
		if !validSIPNumber(number) || !validSIPNumber(caller) {
			return
		}
		req := s.newInvite("cid-1", s.trunkURI(number), caller, []byte("v=0\r\n"))
		msg, err := sip.ParseMessage([]byte(req.String()))
		if err != nil {
			t.Fatalf("INVITE does not parse: %v\n%s", err, req)
		}
		back := msg.(*sip.Request)
		if back.Recipient.User != number || back.From().Address.User != caller || back.CallID().Value() != "cid-1" {
			t.Fatalf("round trip changed the INVITE:\n%s", back)
		}
	})
}

// TestSIPListener checks what the local SIP socket answers on its own: 200
// to OPTIONS keepalives, 481 to a BYE for no call, 403 to inbound INVITEs.
func TestSIPListener(t *testing.T) {
	s, err := New(Config{Trunk: "127.0.0.1:9", ListenAddr: "0.0.0.0:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.host != "127.0.0.1" {
		t.Errorf("advertised host %q, want 127.0.0.1 (route to the trunk)", s.host)
	}
	conn, err := net.Dial("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	local := conn.LocalAddr().String()
	for i, c := range []struct {
		method string
		want   int
	}{{"OPTIONS", 200}, {"BYE", 481}, {"INVITE", 403}} {
		req := c.method + " sip:agentd@127.0.0.1 SIP/2.0\r\n" +
			"Via: SIP/2.0/UDP " + local + ";branch=z9hG4bKtest" + strconv.Itoa(i) + "\r\n" +
			"From: <sip:peer@127.0.0.1>;tag=p1\r\nTo: <sip:agentd@127.0.0.1>;tag=x1\r\n" +
			"dial.Call-ID: stray-" + strconv.Itoa(i) + "\r\nCSeq: 1 " + c.method + "\r\n" +
			"Contact: <sip:peer@" + local + ">\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("%s: no answer: %v", c.method, err)
			}
			res := parseSIPResponse(t, strings.ReplaceAll(string(buf[:n]), "\r\n", "\n"))
			if res.StatusCode < 200 {
				continue // 100 Trying for the INVITE
			}
			if res.StatusCode != c.want {
				t.Errorf("%s answered %d, want %d", c.method, res.StatusCode, c.want)
			}
			break
		}
	}
}

// SIP refusals with Retry-After (403, 503) and trunk limit phrases are
// pushback; the Retry-After is read in seconds.
func TestSIPPushback(t *testing.T) {
	for _, c := range []struct {
		code, reason, extra string
		after               time.Duration
	}{
		{"503", "Service Unavailable", "Retry-After: 30\n", 30 * time.Second},
		{"403", "Forbidden", "Retry-After: 120;duration=60\n", 2 * time.Minute},
		{"403", "Too Many Calls", "", 0},
	} {
		_, err := sipFinalResult(parseSIPResponse(t, sipResponseText(c.code, c.reason, c.extra)))
		var pb *dial.Pushback
		ok := errors.As(err, &pb)
		if !ok || pb.RetryAfter != c.after || !strings.Contains(pb.Error(), "SIP "+c.code) {
			t.Errorf("%s %s: %v (%+v)", c.code, c.reason, err, pb)
		}
	}
	if _, err := sipFinalResult(parseSIPResponse(t, sipResponseText("403", "Forbidden", ""))); err != nil {
		t.Errorf("plain 403 is pushback: %v", err)
	}
}
