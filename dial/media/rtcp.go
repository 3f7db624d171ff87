package media

import (
	"errors"
	"net"
	"time"

	"github.com/pion/rtcp"
)

// RTCP (RFC 3550): a sender report with one reception block every 5 s on
// the port above RTP, so a trunk's quality monitoring sees the call; the
// peer's reports are read and only counted (and their address latched).

// reception follows the peer's stream for the reception block.
type reception struct {
	started          bool
	baseSeq, maxSeq  uint16
	cycles           uint32
	received         uint32
	expectedPrior    uint32
	receivedPrior    uint32
	transit          int64
	jitter           float64 // in timestamp units
	lastSR           uint32  // middle 32 bits of the last SR's NTP time
	lastSRAt         time.Time
	sentPkts, octets uint32 // of our stream (owned by the clock)
}

// note records one audio packet of the peer (s.mu held).
func (r *reception) note(seq uint16, ts uint32, now time.Time) {
	if !r.started {
		r.started, r.baseSeq, r.maxSeq = true, seq, seq-1
	}
	if d := seq - r.maxSeq; d > 0 && d < 0x8000 {
		if seq < r.maxSeq {
			r.cycles += 1 << 16
		}
		r.maxSeq = seq
	}
	r.received++
	arrival := now.UnixNano() * 8000 / int64(time.Second)
	transit := arrival - int64(ts)
	if r.transit != 0 {
		d := float64(transit - r.transit)
		if d < 0 {
			d = -d
		}
		r.jitter += (d - r.jitter) / 16
	}
	r.transit = transit
}

func (r *reception) block(ssrc uint32, now time.Time) rtcp.ReceptionReport {
	ext := r.cycles + uint32(r.maxSeq)
	expected := ext - uint32(r.baseSeq) + 1
	lost := int64(expected) - int64(r.received)
	expInt, recInt := expected-r.expectedPrior, r.received-r.receivedPrior
	r.expectedPrior, r.receivedPrior = expected, r.received
	var frac uint8
	if lostInt := int64(expInt) - int64(recInt); expInt > 0 && lostInt > 0 {
		frac = uint8(lostInt << 8 / int64(expInt))
	}
	rr := rtcp.ReceptionReport{
		SSRC: ssrc, FractionLost: frac, TotalLost: uint32(max(lost, 0)) & 0xFFFFFF,
		LastSequenceNumber: ext, Jitter: uint32(r.jitter), LastSenderReport: r.lastSR,
	}
	if !r.lastSRAt.IsZero() {
		rr.Delay = uint32(now.Sub(r.lastSRAt) * 65536 / time.Second)
	}
	return rr
}

// ntpTime is t in NTP's 32.32 fixed point.
func ntpTime(t time.Time) uint64 {
	secs := uint64(t.Unix()) + 2208988800
	frac := uint64(t.Nanosecond()) << 32 / uint64(time.Second)
	return secs<<32 | frac
}

// sendReport sends a sender report (called by tick on the clock).
func (s *Session) sendReport() {
	now := time.Now()
	s.mu.Lock()
	sr := rtcp.SenderReport{SSRC: s.ssrc, NTPTime: ntpTime(now), RTPTime: s.ts,
		PacketCount: s.rx.sentPkts, OctetCount: s.rx.octets}
	if s.havePeer && s.rx.started {
		sr.Reports = []rtcp.ReceptionReport{s.rx.block(s.peerSSRC, now)}
	}
	to := s.remoteRTCP
	s.mu.Unlock()
	b, err := sr.Marshal()
	if err != nil || !to.IsValid() {
		return
	}
	if _, err := s.rtcpConn.WriteToUDPAddrPort(b, to); err == nil {
		s.mu.Lock()
		s.stats.RTCPSent++
		s.mu.Unlock()
	}
}

// readRTCP reads the peer's reports until Close.
func (s *Session) readRTCP() {
	defer s.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, from, err := s.rtcpConn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		pkts, err := rtcp.Unmarshal(buf[:n])
		s.mu.Lock()
		if err != nil {
			s.stats.Malformed++
			s.mu.Unlock()
			continue
		}
		s.stats.RTCPReceived++
		if s.latched {
			s.remoteRTCP = from
		}
		for _, p := range pkts {
			if sr, ok := p.(*rtcp.SenderReport); ok {
				s.rx.lastSR, s.rx.lastSRAt = uint32(sr.NTPTime>>16), time.Now()
			}
		}
		s.mu.Unlock()
	}
}
