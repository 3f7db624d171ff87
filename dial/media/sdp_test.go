package media

import (
	"net/netip"
	"strings"
	"testing"
)

const asteriskOffer = "v=0\r\n" +
	"o=- 1 2 IN IP4 203.0.113.5\r\n" +
	"s=Asterisk\r\n" +
	"c=IN IP4 203.0.113.5\r\n" +
	"t=0 0\r\n" +
	"m=audio 17022 RTP/AVP 9 8 0 101\r\n" +
	"a=rtpmap:9 G722/8000\r\n" +
	"a=rtpmap:8 PCMA/8000\r\n" +
	"a=rtpmap:0 PCMU/8000\r\n" +
	"a=rtpmap:101 telephone-event/8000\r\n" +
	"a=fmtp:101 0-16\r\n" +
	"a=ptime:20\r\n" +
	"a=sendrecv\r\n" +
	"m=video 0 RTP/AVP 96\r\n" +
	"c=IN IP4 198.51.100.1\r\n"

func TestParseSDP(t *testing.T) {
	d, err := ParseSDP([]byte(asteriskOffer))
	if err != nil {
		t.Fatal(err)
	}
	if d.Addr != netip.MustParseAddr("203.0.113.5") || d.Port != 17022 || d.Ptime != 20 || d.Direction != "sendrecv" || len(d.Formats) != 4 {
		t.Fatalf("%+v", d)
	}
	c, err := Negotiate(d)
	if err != nil || c.Audio.Name != "PCMA" || c.Event != 101 || !c.Alaw() {
		t.Fatalf("negotiated %+v, %v: want the offer's first G.711 (PCMA) and event 101", c, err)
	}

	// Media-level c= wins; static payload types need no rtpmap; LF only.
	d, err = ParseSDP([]byte("v=0\nc=IN IP4 192.0.2.1\nt=0 0\nm=audio 4000 RTP/AVP 0\nc=IN IP4 192.0.2.2\na=recvonly\n"))
	if err != nil || d.Addr != netip.MustParseAddr("192.0.2.2") || d.Direction != "recvonly" {
		t.Fatalf("%+v %v", d, err)
	}
	if c, err := Negotiate(d); err != nil || c.Audio.Name != "PCMU" || c.Event != -1 {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestParseSDPRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"no audio":   "v=0\r\nc=IN IP4 192.0.2.1\r\nm=video 4000 RTP/AVP 96\r\n",
		"no address": "v=0\r\nm=audio 4000 RTP/AVP 0\r\n",
		"hostname":   "v=0\r\nc=IN IP4 pbx.example.com\r\nm=audio 4000 RTP/AVP 0\r\n",
		"bad port":   "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 99999 RTP/AVP 0\r\n",
		"huge":       "v=0\r\n" + strings.Repeat("a=x\r\n", 5000),
	} {
		if _, err := ParseSDP([]byte(body)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	for name, body := range map[string]string{
		"g729 only": "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 4000 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n",
		"srtp":      "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 4000 RTP/SAVP 0\r\n",
		"refused":   "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 0 RTP/AVP 0\r\n",
		"wideband":  "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 4000 RTP/AVP 96\r\na=rtpmap:96 PCMU/16000\r\n",
	} {
		d, err := ParseSDP([]byte(body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, err := Negotiate(d); err == nil {
			t.Errorf("%s: negotiated", name)
		}
	}
}

// Our offer and our answer parse back to what they say.
func TestOfferAnswer(t *testing.T) {
	p := SDPParams{Addr: netip.MustParseAddr("198.51.100.7"), Port: 10002, Session: 7}
	d, err := ParseSDP(Offer(p))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Negotiate(d)
	if err != nil || d.Port != 10002 || d.Addr != p.Addr || c.Audio.PT != PCMU || c.Event != int(EventPT) || d.Ptime != 20 {
		t.Fatalf("offer %+v %+v %v", d, c, err)
	}
	a, err := ParseSDP(Answer(p, Codec{Audio: Format{PT: 8, Name: "PCMA", Rate: 8000}, Event: 96}))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := Negotiate(a); err != nil || c.Audio.Name != "PCMA" || c.Event != 96 || len(a.Formats) != 2 {
		t.Fatalf("answer %+v %+v %v", a, c, err)
	}
	v6, err := ParseSDP(Offer(SDPParams{Addr: netip.MustParseAddr("2001:db8::1"), Port: 10000}))
	if err != nil || !v6.Addr.Is6() {
		t.Fatalf("%+v %v", v6, err)
	}
}

func TestParsePorts(t *testing.T) {
	if lo, hi, err := ParsePorts("10001-10003"); err != nil || lo != 10002 || hi != 10003 {
		t.Fatalf("%d %d %v", lo, hi, err)
	}
	for _, bad := range []string{"", "10000", "abc-def", "20000-10000", "80-100", "10000-70000", "10001-10002"} {
		if _, _, err := ParsePorts(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestG711(t *testing.T) {
	for _, alaw := range []bool{false, true} {
		for _, v := range []int16{0, 1, -1, 100, -100, 1000, -1000, 12345, -12345, 32767, -32768} {
			got := decode(nil, alaw, encode(nil, alaw, []int16{v}))[0]
			if d := int(got) - int(v); d*d > (int(v)/16+16)*(int(v)/16+16) {
				t.Errorf("alaw=%v: %d came back as %d", alaw, v, got)
			}
		}
		for b := range 256 { // every code decodes to a value that encodes back to it
			pcm := decode(nil, alaw, []byte{byte(b)})
			if back := encode(nil, alaw, pcm)[0]; back != byte(b) && pcm[0] != 0 {
				t.Errorf("alaw=%v: code %#x -> %d -> %#x", alaw, b, pcm[0], back)
			}
		}
	}
}

func TestParseInfo(t *testing.T) {
	for _, c := range []struct {
		ct, body string
		want     byte
	}{
		{"application/dtmf-relay", "Signal=5\r\nDuration=160\r\n", '5'},
		{"Application/DTMF-Relay; charset=x", "Signal= #\r\n", '#'},
		{"application/dtmf-relay", "Signal=10\r\n", '*'},
		{"application/dtmf", "a", 'A'},
		{"application/dtmf-relay", "Signal=Z\r\n", 0},
		{"text/plain", "5", 0},
	} {
		got, ok := ParseInfo(c.ct, []byte(c.body))
		if got != c.want || ok != (c.want != 0) {
			t.Errorf("%q %q: %q %v", c.ct, c.body, got, ok)
		}
	}
}
