package media

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// SDP (RFC 4566) offer/answer for one audio stream: G.711 (PCMU, PCMA) at
// 8 kHz plus telephone-event (RFC 4733). Only what a SIP trunk or phone
// puts in an audio offer is read; the rest is ignored.

// Static payload types of G.711, and the one we offer for telephone-event.
const (
	PCMU     uint8 = 0
	PCMA     uint8 = 8
	EventPT  uint8 = 101
	maxSDP         = 16 << 10
	maxLines       = 500
)

// Format is one payload type of an m= line with its rtpmap.
type Format struct {
	PT   uint8
	Name string // upper case: PCMU, PCMA, TELEPHONE-EVENT, ...
	Rate int
}

// Desc is the audio part of a peer's SDP.
type Desc struct {
	Addr      netip.Addr // media connection address (media level over session level)
	Port      int        // RTP port; 0 means the stream is refused
	Proto     string     // RTP/AVP
	Formats   []Format   // in the peer's order of preference
	Ptime     int        // packet time in ms; 0 when not given
	Direction string     // sendrecv (default), sendonly, recvonly or inactive
}

// Codec is what offer/answer settled on.
type Codec struct {
	Audio Format // PCMU or PCMA
	Event int    // telephone-event payload type; -1 when the peer takes none
}

// Alaw reports whether the audio codec is PCMA.
func (c Codec) Alaw() bool { return c.Audio.Name == "PCMA" }

// ErrNoCodec is returned when the peer offers neither PCMU nor PCMA.
var ErrNoCodec = errors.New("sdp: no common codec (want PCMU or PCMA at 8000 Hz)")

// ParseSDP reads the first audio stream of an SDP body.
func ParseSDP(body []byte) (Desc, error) {
	if len(body) > maxSDP {
		return Desc{}, errors.New("sdp: body too large")
	}
	var d Desc
	var sessAddr, mediaAddr netip.Addr
	inAudio, seenAudio, done := false, false, false
	rtpmap := map[uint8]Format{}
	var pts []uint8
	d.Direction = "sendrecv"
	sessDir := ""
	lines := strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n")
	if len(lines) > maxLines {
		return Desc{}, errors.New("sdp: too many lines")
	}
	for _, ln := range lines {
		ln = strings.TrimSpace(ln)
		if len(ln) < 2 || ln[1] != '=' {
			continue
		}
		key, val := ln[0], ln[2:]
		if key == 'm' {
			if seenAudio {
				done = true // only the first audio stream counts
			}
			inAudio = false
			f := strings.Fields(val)
			if !done && len(f) >= 4 && f[0] == "audio" {
				port, err := strconv.Atoi(strings.SplitN(f[1], "/", 2)[0])
				if err != nil || port < 0 || port > 65535 {
					return Desc{}, fmt.Errorf("sdp: bad media port %q", f[1])
				}
				d.Port, d.Proto = port, f[2]
				for _, p := range f[3:] {
					n, err := strconv.Atoi(p)
					if err != nil || n < 0 || n > 127 {
						continue
					}
					if len(pts) < 32 {
						pts = append(pts, uint8(n))
					}
				}
				inAudio, seenAudio = true, true
			}
			continue
		}
		if done || (seenAudio && !inAudio) {
			continue
		}
		switch key {
		case 'c':
			a, err := parseConn(val)
			if err != nil {
				return Desc{}, err
			}
			if inAudio {
				mediaAddr = a
			} else {
				sessAddr = a
			}
		case 'a':
			name, arg, _ := strings.Cut(val, ":")
			switch name {
			case "rtpmap":
				if !inAudio {
					continue
				}
				if f, ok := parseRtpmap(arg); ok {
					rtpmap[f.PT] = f
				}
			case "ptime":
				if n, err := strconv.Atoi(strings.TrimSpace(arg)); err == nil && n > 0 && n <= 200 {
					d.Ptime = n
				}
			case "sendrecv", "sendonly", "recvonly", "inactive":
				if inAudio {
					d.Direction = name
				} else {
					sessDir = name
				}
			}
		}
	}
	if !seenAudio {
		return Desc{}, errors.New("sdp: no audio stream")
	}
	if sessDir != "" && d.Direction == "sendrecv" {
		d.Direction = sessDir
	}
	d.Addr = mediaAddr
	if !d.Addr.IsValid() {
		d.Addr = sessAddr
	}
	if !d.Addr.IsValid() && d.Port != 0 {
		return Desc{}, errors.New("sdp: no connection address")
	}
	for _, pt := range pts {
		f, ok := rtpmap[pt]
		if !ok {
			f = Format{PT: pt}
			switch pt { // static payload types need no rtpmap
			case PCMU:
				f.Name, f.Rate = "PCMU", 8000
			case PCMA:
				f.Name, f.Rate = "PCMA", 8000
			}
		}
		d.Formats = append(d.Formats, f)
	}
	return d, nil
}

// parseConn reads "IN IP4 192.0.2.1" (a multicast "/ttl" suffix dropped).
func parseConn(v string) (netip.Addr, error) {
	f := strings.Fields(v)
	if len(f) != 3 || f[0] != "IN" || (f[1] != "IP4" && f[1] != "IP6") {
		return netip.Addr{}, fmt.Errorf("sdp: bad connection line %q", v)
	}
	host, _, _ := strings.Cut(f[2], "/")
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("sdp: connection address %q is not an IP address", host)
	}
	return a.Unmap(), nil
}

// parseRtpmap reads "0 PCMU/8000" or "101 telephone-event/8000/1".
func parseRtpmap(v string) (Format, bool) {
	pt, enc, ok := strings.Cut(strings.TrimSpace(v), " ")
	n, err := strconv.Atoi(pt)
	if !ok || err != nil || n < 0 || n > 127 {
		return Format{}, false
	}
	parts := strings.Split(strings.TrimSpace(enc), "/")
	if len(parts) < 2 {
		return Format{}, false
	}
	rate, err := strconv.Atoi(parts[1])
	if err != nil {
		return Format{}, false
	}
	return Format{PT: uint8(n), Name: strings.ToUpper(parts[0]), Rate: rate}, true
}

// Negotiate picks, in the peer's order, the first G.711 codec at 8 kHz,
// and the peer's telephone-event payload type at 8 kHz if any.
func Negotiate(d Desc) (Codec, error) {
	c := Codec{Event: -1}
	found := false
	for _, f := range d.Formats {
		switch {
		case !found && f.Rate == 8000 && (f.Name == "PCMU" || f.Name == "PCMA"):
			c.Audio, found = f, true
		case c.Event < 0 && f.Rate == 8000 && f.Name == "TELEPHONE-EVENT":
			c.Event = int(f.PT)
		}
	}
	if !found {
		return c, ErrNoCodec
	}
	if d.Port == 0 {
		return c, errors.New("sdp: audio stream refused (port 0)")
	}
	if d.Proto != "RTP/AVP" && d.Proto != "RTP/AVPF" {
		return c, fmt.Errorf("sdp: media protocol %q not supported (want RTP/AVP)", d.Proto)
	}
	return c, nil
}

// SDPParams are what our side of an offer or answer says.
type SDPParams struct {
	Addr    netip.Addr // where we receive RTP (the public address behind NAT)
	Port    int
	Session uint64 // o= session id and version
}

// Offer is our SDP offer: PCMU, PCMA and telephone-event, 20 ms packets.
func Offer(p SDPParams) []byte {
	return sdpBody(p, []Format{
		{PT: PCMU, Name: "PCMU", Rate: 8000},
		{PT: PCMA, Name: "PCMA", Rate: 8000},
		{PT: EventPT, Name: "telephone-event", Rate: 8000},
	})
}

// Answer is our SDP answer to an offer negotiated into c, in the
// offer's payload type numbers.
func Answer(p SDPParams, c Codec) []byte {
	fs := []Format{c.Audio}
	if c.Event >= 0 {
		fs = append(fs, Format{PT: uint8(c.Event), Name: "telephone-event", Rate: 8000})
	}
	return sdpBody(p, fs)
}

func sdpBody(p SDPParams, fs []Format) []byte {
	ipv := "IP4"
	if p.Addr.Is6() {
		ipv = "IP6"
	}
	host := p.Addr.String()
	sess := strconv.FormatUint(p.Session, 10)
	var b strings.Builder
	b.WriteString("v=0\r\no=agentd " + sess + " " + sess + " IN " + ipv + " " + host + "\r\n")
	b.WriteString("s=agentd\r\nc=IN " + ipv + " " + host + "\r\nt=0 0\r\n")
	b.WriteString("m=audio " + strconv.Itoa(p.Port) + " RTP/AVP")
	for _, f := range fs {
		b.WriteString(" " + strconv.Itoa(int(f.PT)))
	}
	b.WriteString("\r\n")
	for _, f := range fs {
		name := f.Name
		if strings.EqualFold(name, "telephone-event") {
			name = "telephone-event"
		}
		fmt.Fprintf(&b, "a=rtpmap:%d %s/%d\r\n", f.PT, name, f.Rate)
		if name == "telephone-event" {
			fmt.Fprintf(&b, "a=fmtp:%d 0-16\r\n", f.PT)
		}
	}
	b.WriteString("a=ptime:20\r\na=sendrecv\r\n")
	return []byte(b.String())
}
