package media

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// DTMF as RFC 4733 telephone-events in RTP, and as SIP INFO bodies.

// A digit we send: 100 ms of tone in 5 packets that share the event's
// RTP timestamp (the first marked, the duration growing), the end packet
// 3 times as the RFC advises against loss, then 60 ms of pause before the
// next digit.
const (
	eventPackets = 5
	endPackets   = 3
	gapTicks     = 3
	eventVolume  = 10 // -10 dBm0
)

type digitJob struct {
	code  int
	ts    uint32
	begun bool
	step  int
	done  chan struct{}
}

// nextDigit returns the digit whose packet goes out this tick, or nil to
// send audio. Called with s.mu held, from the clock.
func (s *Session) nextDigit() *digitJob {
	for len(s.digits) > 0 {
		j := s.digits[0]
		if !j.begun {
			j.begun, j.ts = true, s.ts
		}
		switch {
		case j.step < eventPackets+endPackets:
			return j
		case j.step < eventPackets+endPackets+gapTicks:
			j.step++
			return nil
		}
		close(j.done)
		s.digits[0] = nil
		s.digits = s.digits[1:]
	}
	return nil
}

// packet appends this step's 4-byte event payload and moves on.
func (j *digitJob) packet(dst []byte) []byte {
	dur := uint16(min(j.step+1, eventPackets) * FrameSamples)
	flags := byte(eventVolume)
	if j.step >= eventPackets {
		flags |= 0x80 // E: the event ended
	}
	j.step++
	return append(dst, byte(j.code), flags, byte(dur>>8), byte(dur))
}

type event struct {
	code     int
	end      bool
	volume   int
	duration uint16
}

// parseEvent reads an RFC 4733 named-event payload.
func parseEvent(b []byte) (event, bool) {
	if len(b) < 4 {
		return event{}, false
	}
	return event{code: int(b[0]), end: b[1]&0x80 != 0, volume: int(b[1] & 0x3F), duration: binary.BigEndian.Uint16(b[2:4])}, true
}

// eventDigit is the digit of event code c (0-9, 10 *, 11 #, 12-15 A-D), or 0.
func eventDigit(c int) byte {
	switch {
	case c >= 0 && c <= 9:
		return byte('0' + c)
	case c == 10:
		return '*'
	case c == 11:
		return '#'
	case c >= 12 && c <= 15:
		return byte('A' + c - 12)
	}
	return 0
}

// eventCode is the event code of digit d, or -1.
func eventCode(d byte) int {
	switch {
	case d >= '0' && d <= '9':
		return int(d - '0')
	case d == '*':
		return 10
	case d == '#':
		return 11
	case d >= 'A' && d <= 'D':
		return int(d-'A') + 12
	case d >= 'a' && d <= 'd':
		return int(d-'a') + 12
	}
	return -1
}

// ParseInfo reads the digit of a SIP INFO body: application/dtmf-relay
// ("Signal=5\r\nDuration=160") or application/dtmf ("5"). It reports
// false for any other content or an unknown signal.
func ParseInfo(contentType string, body []byte) (byte, bool) {
	ct, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(contentType)), ";")
	if len(body) > 1024 {
		return 0, false
	}
	var sig string
	switch strings.TrimSpace(ct) {
	case "application/dtmf-relay":
		for _, ln := range strings.Split(string(body), "\n") {
			k, v, ok := strings.Cut(ln, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "signal") {
				sig = strings.TrimSpace(v)
				break
			}
		}
	case "application/dtmf":
		sig = strings.TrimSpace(string(body))
	default:
		return 0, false
	}
	if len(sig) == 1 && eventCode(sig[0]) >= 0 {
		return strings.ToUpper(sig)[0], true
	}
	if n, err := strconv.Atoi(sig); err == nil {
		if d := eventDigit(n); d != 0 {
			return d, true
		}
	}
	return 0, false
}

// InfoBody is the application/dtmf-relay body of a SIP INFO for digit d.
func InfoBody(d byte) []byte {
	return []byte("Signal=" + string(d) + "\r\nDuration=100\r\n")
}
