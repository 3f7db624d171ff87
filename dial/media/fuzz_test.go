package media

import (
	"log/slog"
	"net/netip"
	"testing"

	"github.com/pion/rtp"
)

// FuzzParseSDP: any body parses or fails, never panics; what negotiates
// answers with an SDP that parses back to the same codec.
func FuzzParseSDP(f *testing.F) {
	f.Add([]byte(asteriskOffer))
	f.Add(Offer(SDPParams{Addr: netip.MustParseAddr("192.0.2.1"), Port: 10000}))
	f.Add([]byte("v=0\nc=IN IP6 ::1\nm=audio 1/2 RTP/AVP 0 8 101\na=rtpmap:101 telephone-event/8000/1\na=ptime:30\n"))
	f.Add([]byte("m=audio 5 RTP/AVP 300 -1 x\nc=IN IP4 1.2.3.4/127\na=rtpmap:\na=rtpmap:96 /\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := ParseSDP(body)
		if err != nil {
			return
		}
		c, err := Negotiate(d)
		if err != nil {
			return
		}
		back, err := ParseSDP(Answer(SDPParams{Addr: netip.MustParseAddr("192.0.2.1"), Port: 10000}, c))
		if err != nil {
			t.Fatalf("our answer does not parse: %v", err)
		}
		c2, err := Negotiate(back)
		if err != nil || c2.Audio != c.Audio || c2.Event != c.Event {
			t.Fatalf("answer says %+v (%v), negotiated %+v", c2, err, c)
		}
	})
}

// FuzzReceive: any datagram on the RTP port (RTP, RFC 4733 events, junk)
// is taken or dropped without a panic, and the jitter buffer still plays
// out whole frames.
func FuzzReceive(f *testing.F) {
	audio, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 0, SequenceNumber: 7, Timestamp: 160, SSRC: 1}, Payload: make([]byte, 160)}).Marshal()
	ev, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 101, SequenceNumber: 8, Timestamp: 320, SSRC: 1, Marker: true}, Payload: []byte{1, 0x8a, 3, 0x20}}).Marshal()
	padded, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 8, Padding: true, Extension: true, ExtensionProfile: 0xBEDE, Timestamp: 1 << 31}, Payload: []byte{1, 2, 3}, PaddingSize: 4}).Marshal()
	f.Add(audio)
	f.Add(ev)
	f.Add(padded)
	f.Add([]byte{0x80})
	f.Add([]byte{0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	from := netip.MustParseAddrPort("127.0.0.1:4000")
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &Session{codec: Codec{Audio: Format{PT: 0, Name: "PCMU", Rate: 8000}, Event: 101}, jb: newJitterBuffer(DefaultJitter), log: slog.New(slog.DiscardHandler)}
		pcm := make([]int16, 0, 1500)
		for range 3 {
			if d := s.receive(b, from, pcm); d != 0 && eventCode(d) < 0 {
				t.Fatalf("digit %q", d)
			}
			out := make([]int16, FrameSamples)
			s.jb.frame(out)
		}
	})
}

// FuzzParseInfo: a SIP INFO body yields a valid digit or nothing.
func FuzzParseInfo(f *testing.F) {
	f.Add("application/dtmf-relay", []byte("Signal=5\r\nDuration=160\r\n"))
	f.Add("application/dtmf", []byte("11"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		if d, ok := ParseInfo(ct, body); ok && eventCode(d) < 0 {
			t.Fatalf("digit %q", d)
		}
	})
}
