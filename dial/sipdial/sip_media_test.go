package sipdial

import (
	"context"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"

	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// echoTalker plays a 440 Hz tone, listens for a while (to a peer that
// echoes RTP back, it hears its own tone), optionally sends digits, and
// records what it heard.
type echoTalker struct {
	listen time.Duration
	send   string // digits sent after the tone
	end    dial.TalkEnd

	mu     sync.Mutex
	sess   dial.Session
	heard  []int16
	digits string
	ctxErr error
	done   chan struct{}
}

func newEchoTalker(listen time.Duration) *echoTalker {
	return &echoTalker{listen: listen, done: make(chan struct{})}
}

func (e *echoTalker) Talk(ctx context.Context, s dial.Session) dial.TalkEnd {
	defer close(e.done)
	e.mu.Lock()
	e.sess = s
	e.mu.Unlock()
	if err := s.Media.Write(sine(440, 8000)); err != nil {
		panic(err)
	}
	rctx, cancel := context.WithTimeout(ctx, e.listen)
	defer cancel()
	sent := e.send == ""
	for {
		in, err := s.Media.Read(rctx)
		if err != nil {
			break
		}
		e.mu.Lock()
		e.heard = append(e.heard, in.PCM...)
		if in.Digit != 0 {
			e.digits += string(in.Digit)
		}
		n := len(e.heard)
		e.mu.Unlock()
		if !sent && n > 1500*dial.SampleRate/1000 {
			sent = true
			go func() {
				if err := s.Media.SendDigits(ctx, e.send); err != nil {
					panic(err)
				}
			}()
		}
	}
	e.mu.Lock()
	e.ctxErr = ctx.Err()
	e.mu.Unlock()
	return e.end
}

func sine(hz float64, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(8000 * math.Sin(2*math.Pi*hz*float64(i)/dial.SampleRate))
	}
	return out
}

// toneHeard reports the loudest 200 ms window's RMS and its frequency
// estimated by zero crossings.
func toneHeard(pcm []int16) (rms, hz float64) {
	const win = 1600
	for i := 0; i+win <= len(pcm); i += win / 2 {
		var sum float64
		cross := 0
		for j := i; j < i+win; j++ {
			sum += float64(pcm[j]) * float64(pcm[j])
			if j > i && (pcm[j-1] < 0) != (pcm[j] < 0) {
				cross++
			}
		}
		if r := math.Sqrt(sum / win); r > rms {
			rms, hz = r, float64(cross)/2/(win/float64(dial.SampleRate))
		}
	}
	return rms, hz
}

func checkTone(t *testing.T, pcm []int16) {
	t.Helper()
	rms, hz := toneHeard(pcm)
	if rms < 2000 || hz < 420 || hz > 460 {
		t.Errorf("heard rms %.0f at %.0f Hz, want the 440 Hz tone echoed back (%d samples)", rms, hz, len(pcm))
	}
}

func rtpEcho(t *testing.T) []string {
	return []string{"-rtp_echo", "-mp", strconv.Itoa(sipptest.FreePort(t))}
}

// An outbound call to sipp: the SDP answer is taken, the Talker's tone
// reaches sipp and comes back through its RTP echo, the digit sipp plays
// as RFC 4733 events (its own pcap) and the one it sends as SIP INFO
// reach the Talker, and the dialer hangs up when the Talker returns.
func TestSIPMediaOutbound(t *testing.T) {
	sipp := sipptest.Start(t, "media_callee", sipptest.Options{Calls: 1, Args: rtpEcho(t)})
	talker := newEchoTalker(3500 * time.Millisecond)
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32000-32099" })
	res, _ := dialOnce(t, s, context.Background(), &progressLog{})
	if res.Status != dial.StatusCompleted || res.Duration < 3*time.Second {
		t.Fatalf("result %+v, want completed after the talker's 3.5 s", res)
	}
	if code := sipp.Wait(t, 10*time.Second); code != 0 {
		t.Fatalf("sipp exit code %d", code)
	}
	talker.mu.Lock()
	defer talker.mu.Unlock()
	checkTone(t, talker.heard)
	if talker.digits != "15" {
		t.Errorf("digits %q, want 1 (RFC 4733) then 5 (SIP INFO)", talker.digits)
	}
	if d := talker.sess; d.Direction != "outbound" || d.From != testCall.CallerID || d.To != testCall.PhoneNumber || d.Call.ID != testCall.ID {
		t.Errorf("session %+v", d)
	}
	if s.ports.InUse() != 0 {
		t.Errorf("%d RTP port pairs still in use after the call", s.ports.InUse())
	}
}

// A peer that takes no telephone-event gets DTMF as SIP INFO; PCMA
// audio flows; a Talker's failure reason fails the attempt but keeps its
// duration.
func TestSIPMediaInfoFallbackAndReason(t *testing.T) {
	sipp := sipptest.Start(t, "media_callee_info", sipptest.Options{Calls: 1, Args: rtpEcho(t)})
	talker := newEchoTalker(2500 * time.Millisecond)
	talker.send = "7"
	talker.end = dial.TalkEnd{Reason: "speech-to-text service unavailable"}
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32100-32199" })
	res, _ := dialOnce(t, s, context.Background(), &progressLog{})
	if res.Status != dial.StatusFailed || res.Reason != "speech-to-text service unavailable" || res.Duration < 2*time.Second {
		t.Fatalf("result %+v, want failed with the talker's reason and its duration", res)
	}
	if code := sipp.Wait(t, 10*time.Second); code != 0 {
		t.Fatalf("sipp exit code %d (the INFO with Signal=7 did not come?)", code)
	}
	talker.mu.Lock()
	defer talker.mu.Unlock()
	checkTone(t, talker.heard)
}

// The callee's BYE cancels the Talker's context.
func TestSIPMediaFarEndHangup(t *testing.T) {
	sipp := sipptest.Start(t, "answer_hangup", sipptest.Options{Calls: 1})
	talker := newEchoTalker(time.Minute)
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32200-32299" })
	res, took := dialOnce(t, s, context.Background(), &progressLog{})
	if res.Status != dial.StatusCompleted || took > 20*time.Second {
		t.Fatalf("result %+v after %v", res, took)
	}
	select {
	case <-talker.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Talk did not return after the far end hung up")
	}
	if talker.ctxErr == nil {
		t.Error("the talker's context was not cancelled by the BYE")
	}
}

// An inbound call from sipp is answered with an SDP answer in the
// offer's first common codec (PCMA) with telephone-event, handed to the
// Talker, whose tone comes back through sipp's echo, as do its RFC 4733
// digits; the dialer hangs up when the Talker returns.
func TestSIPMediaInbound(t *testing.T) {
	port := sipptest.FreePort(t)
	talker := newEchoTalker(3 * time.Second)
	talker.send = "9#"
	s := newTestSIP(t, "127.0.0.1:9", func(c *Config) {
		c.ListenAddr = "127.0.0.1:" + strconv.Itoa(port)
		c.Talker = talker
		c.RTPPorts = "32300-32399"
	})
	in := &fakeInbound{done: make(chan struct{})}
	s.SetInbound(in)
	sipp := sipptest.Start(t, "inbound_media", sipptest.Options{Calls: 1,
		Args: append(rtpEcho(t), "-s", "+15550001111", s.LocalAddr())})
	if code := sipp.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("sipp exit code %d", code)
	}
	select {
	case <-in.done:
	case <-time.After(5 * time.Second):
		t.Fatal("inbound call never ended")
	}
	talker.mu.Lock()
	defer talker.mu.Unlock()
	checkTone(t, talker.heard)
	if talker.digits != "9#" {
		t.Errorf("digits echoed back %q, want 9#", talker.digits)
	}
	if d := talker.sess; d.Direction != "inbound" || d.Call.ID != "call-1" || d.From != "+14155550123" || d.To != "+15550001111" {
		t.Errorf("session %+v", d)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ended[0] != dial.StatusCompleted {
		t.Errorf("ended %v", in.ended)
	}
}

// Behind NAT the public address goes into Contact, Via and the SDP; the
// RTP sockets still bind locally.
func TestSIPPublicAddr(t *testing.T) {
	s := newTestSIP(t, "127.0.0.1:9", func(c *Config) { c.PublicAddr = "203.0.113.9:5090"; c.RTPPorts = "32400-32409" })
	if s.host != "203.0.113.9" || s.port != 5090 || s.contactHd.Address.Host != "203.0.113.9" || s.contactHd.Address.Port != 5090 {
		t.Fatalf("advertised %s:%d, contact %s", s.host, s.port, s.contactHd.Address.String())
	}
	cm := &callMedia{}
	if err := s.openMedia(cm); err != nil {
		t.Fatal(err)
	}
	defer cm.sess.Close()
	body := string(media.Offer(s.sdpParams(cm)))
	if !strings.Contains(body, "c=IN IP4 203.0.113.9\r\n") || !strings.Contains(body, "m=audio "+strconv.Itoa(cm.sess.Port())+" RTP/AVP 0 8 101") {
		t.Fatalf("offer:\n%s", body)
	}
	if p := cm.sess.Port(); p < 32400 || p > 32409 || p%2 != 0 {
		t.Fatalf("RTP port %d outside --rtp-ports", p)
	}
}

// A re-INVITE inside the call (a session refresh moving the peer's
// media) is answered 200 with our SDP, and our RTP follows it.
func TestSIPMediaReinvite(t *testing.T) {
	moved, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer moved.Close()
	newPort := moved.LocalAddr().(*net.UDPAddr).Port
	got := make(chan int, 1)
	go func() {
		n, buf := 0, make([]byte, 1500)
		moved.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			if _, err := moved.Read(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	sipp := sipptest.Start(t, "media_reinvite", sipptest.Options{Calls: 1,
		Args: []string{"-mp", strconv.Itoa(sipptest.FreePort(t)), "-key", "newport", strconv.Itoa(newPort)}})
	talker := newEchoTalker(time.Minute)
	s := newTestSIP(t, sipp.Addr, func(c *Config) { c.Talker = talker; c.RTPPorts = "32500-32599" })
	res, _ := dialOnce(t, s, context.Background(), &progressLog{})
	if res.Status != dial.StatusCompleted {
		t.Fatalf("result %+v", res)
	}
	if code := sipp.Wait(t, 10*time.Second); code != 0 {
		t.Fatalf("sipp exit code %d", code)
	}
	<-talker.done
	moved.SetReadDeadline(time.Now())
	if n := <-got; n < 10 {
		t.Errorf("%d RTP packets reached the port the re-INVITE named, want the ~25 of 500 ms", n)
	}
}

// An inbound INVITE with an SDP agentd cannot use (garbage, no G.711, no
// SDP at all) is refused 488 and nothing is recorded.
func TestSIPInboundBadOffer(t *testing.T) {
	s := newTestSIP(t, "127.0.0.1:9", func(c *Config) { c.RTPPorts = "32600-32609" })
	in := &fakeInbound{done: make(chan struct{})}
	s.SetInbound(in)
	conn, err := net.Dial("udp", s.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	local := conn.LocalAddr().String()
	for i, body := range []string{
		"",
		"\x00\xffgarbage=\r\nm=audio x",
		"v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n",
		"v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/SAVP 0\r\n",
	} {
		req := "INVITE sip:+15550001111@127.0.0.1 SIP/2.0\r\n" +
			"Via: SIP/2.0/UDP " + local + ";branch=z9hG4bKbad" + strconv.Itoa(i) + "\r\n" +
			"From: <sip:+14155550123@127.0.0.1>;tag=p1\r\nTo: <sip:+15550001111@127.0.0.1>\r\n" +
			"Call-ID: bad-" + strconv.Itoa(i) + "\r\nCSeq: 1 INVITE\r\n" +
			"Contact: <sip:peer@" + local + ">\r\nMax-Forwards: 70\r\nContent-Type: application/sdp\r\n" +
			"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("offer %d: no answer: %v", i, err)
			}
			res := parseSIPResponse(t, strings.ReplaceAll(string(buf[:n]), "\r\n", "\n"))
			if res.StatusCode < 200 {
				continue
			}
			if res.StatusCode != 488 {
				t.Errorf("offer %d answered %d, want 488", i, res.StatusCode)
			}
			break
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.started) != 0 || s.ports.InUse() != 0 {
		t.Errorf("recorded %d calls, %d ports in use", len(in.started), s.ports.InUse())
	}
}
