// Package media carries the audio of a direct SIP call: SDP offer/answer
// (G.711 and RFC 4733 telephone-event), RTP on a port of the --rtp-ports
// range paced by one process-wide 20 ms clock, a small jitter buffer,
// DTMF both ways, symmetric RTP for NAT and RTCP sender reports. A
// Session is the call's dial.Media.
package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/pion/rtp"
)

const (
	FrameSamples  = dial.FrameSamples
	FrameDuration = dial.FrameDuration

	// DefaultJitter is the jitter buffer's play-out delay: 60 ms absorbs
	// the jitter of a usual trunk and costs little in turn-taking.
	DefaultJitter = 3 * FrameSamples
	inputQueue    = 64  // caller frames (1.28 s) waiting for Read
	recordQueue   = 50  // ticks waiting for the recorder
	rtcpEvery     = 250 // ticks (5 s) between RTCP sender reports
)

// ErrClosed is returned by Write and SendDigits once the call's media ended.
var ErrClosed = errors.New("media: call ended")

// Options are what a Session needs from the signalling side.
type Options struct {
	// SendInfo sends one digit as SIP INFO (application/dtmf-relay), the
	// fallback when the peer took no telephone-event; nil: no fallback.
	SendInfo func(ctx context.Context, digit byte) error
	Log      *slog.Logger
	Jitter   int // play-out delay in samples; 0: DefaultJitter
}

// Session is one call's RTP stream and its dial.Media. Open binds the
// ports (for the SDP), Start begins sending and receiving, Close ends it
// and frees the ports.
type Session struct {
	conn, rtcpConn *net.UDPConn
	release        func()
	port           int
	log            *slog.Logger
	opt            Options

	codec Codec
	ssrc  uint32
	in    chan dial.Input
	done  chan struct{}
	wg    sync.WaitGroup
	sent  atomic.Int64

	mu         sync.Mutex
	started    bool
	closed     bool
	remote     netip.AddrPort // where RTP goes
	remoteRTCP netip.AddrPort
	latched    bool // remote is where the peer's packets come from
	hold       bool // the peer takes no audio now
	jb         *jitterBuffer
	peerSSRC   uint32
	havePeer   bool
	lastEvent  uint32 // RTP timestamp of the last DTMF event received
	haveEvent  bool
	out        []int16 // agent audio queued
	talking    bool    // the last tick sent agent audio
	digits     []*digitJob
	rec        chan recFrame // sent to only under mu
	recDone    chan struct{}
	stats      Stats
	rx         reception

	// Owned by the clock goroutine (tick).
	seq   uint16
	ts    uint32
	ticks int
	buf   [12 + 4*FrameSamples]byte
}

// Stats count what a session saw, for logs and tests.
type Stats struct {
	PacketsSent, PacketsReceived, Malformed, Foreign int
	Late, Duplicates, LostFrames, Resyncs            int
	DigitsReceived, RTCPSent, RTCPReceived           int
}

type recFrame struct{ caller, agent []int16 }

// Open binds an RTP/RTCP port pair of ports on bind (the unspecified
// address listens on all interfaces).
func (p *Ports) Open(bind netip.Addr, opt Options) (*Session, error) {
	rtpConn, rtcpConn, release, err := p.listen(bind)
	if err != nil {
		return nil, err
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Jitter <= 0 {
		opt.Jitter = DefaultJitter
	}
	return &Session{
		conn: rtpConn, rtcpConn: rtcpConn, release: release, opt: opt, log: opt.Log,
		port: rtpConn.LocalAddr().(*net.UDPAddr).Port,
		ssrc: rand.Uint32(), seq: uint16(rand.Uint32()), ts: rand.Uint32(),
		in: make(chan dial.Input, inputQueue), done: make(chan struct{}),
		jb: newJitterBuffer(opt.Jitter),
	}, nil
}

// Port is the local RTP port, for the SDP.
func (s *Session) Port() int { return s.port }

// Codec is what Start settled on.
func (s *Session) Codec() Codec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.codec
}

// Start negotiates with the peer's SDP (an offer or an answer) and starts
// the stream: from now on a packet leaves every 20 ms (silence when the
// agent is quiet, which keeps NAT bindings and the trunk's RTP timeout
// happy) and the caller's audio is read.
func (s *Session) Start(peer Desc) error {
	c, err := Negotiate(peer)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("media: session already started or closed")
	}
	s.started = true
	s.codec = c
	s.setRemote(peer)
	s.mu.Unlock()

	s.wg.Add(2)
	go s.readRTP()
	go s.readRTCP()
	shared.add(s)
	return nil
}

// Update takes a new SDP from the peer (a re-INVITE): a new address, or
// hold. The codec stays.
func (s *Session) Update(peer Desc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setRemote(peer)
}

func (s *Session) setRemote(d Desc) {
	// The peer put the call on hold (it only sends, or nothing): send
	// nothing until it takes audio again.
	s.hold = d.Direction == "sendonly" || d.Direction == "inactive"
	if !d.Addr.IsValid() || d.Addr.IsUnspecified() || d.Port == 0 {
		s.remote, s.remoteRTCP = netip.AddrPort{}, netip.AddrPort{} // on hold: send nothing
		return
	}
	s.remote = netip.AddrPortFrom(d.Addr, uint16(d.Port))
	s.remoteRTCP = netip.AddrPortFrom(d.Addr, uint16(d.Port+1))
	s.latched = false
}

// Close ends the stream, frees the ports and makes Read return io.EOF.
// It is safe to call more than once.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	started := s.started
	for _, j := range s.digits {
		close(j.done)
	}
	s.digits = nil
	s.mu.Unlock()
	if started {
		shared.remove(s)
	}
	s.release() // unblocks the readers
	s.wg.Wait()
	s.Record(nil)
	close(s.done)
}

// Stats returns the counters so far.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Late, st.Duplicates, st.LostFrames, st.Resyncs = s.jb.late, s.jb.dups, s.jb.lostFrames, s.jb.resyncs
	return st
}

// Read returns the caller's next 20 ms frame or digit; see dial.Media.
func (s *Session) Read(ctx context.Context) (dial.Input, error) {
	select {
	case in := <-s.in:
		return in, nil
	case <-s.done:
		return dial.Input{}, io.EOF
	case <-ctx.Done():
		return dial.Input{}, ctx.Err()
	}
}

// Write queues agent audio; the clock sends it 20 ms a packet.
func (s *Session) Write(pcm []int16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.out = append(s.out, pcm...)
	return nil
}

// Clear drops the agent audio not yet sent (barge-in).
func (s *Session) Clear() {
	s.mu.Lock()
	s.out = s.out[:0]
	s.mu.Unlock()
}

// Sent is how many agent samples have left in packets.
func (s *Session) Sent() int64 { return s.sent.Load() }

// Record tees both directions into rec; nil stops. The recorder runs on
// its own goroutine so a slow disk never delays the shared clock; ticks
// it cannot keep up with are dropped. When Record (or Close) returns, the
// previous recorder has received its last frame.
func (s *Session) Record(rec dial.Recorder) {
	s.mu.Lock()
	old, oldDone := s.rec, s.recDone
	s.rec, s.recDone = nil, nil
	if rec != nil && !s.closed {
		ch, done := make(chan recFrame, recordQueue), make(chan struct{})
		s.rec, s.recDone = ch, done
		go func() {
			defer close(done)
			for f := range ch {
				rec.RecordFrame(f.caller, f.agent)
			}
		}()
	}
	s.mu.Unlock()
	if old != nil {
		close(old) // no tick sends on it any more: they send under s.mu
		<-oldDone
	}
}

// InjectDigit delivers a digit that came by SIP INFO.
func (s *Session) InjectDigit(d byte) {
	if eventCode(d) < 0 {
		return
	}
	s.mu.Lock()
	s.stats.DigitsReceived++
	s.mu.Unlock()
	s.deliver(dial.Input{Digit: d})
}

// deliver hands one input to Read without ever blocking the caller (the
// clock or a reader): when nobody reads, the oldest frames are dropped.
func (s *Session) deliver(in dial.Input) {
	for range 2 {
		select {
		case s.in <- in:
			return
		default:
		}
		select {
		case <-s.in:
		default:
		}
	}
}

// tick is one 20 ms step of the call, run by the shared clock: one
// frame of the caller's audio out of the jitter buffer, one packet out.
func (s *Session) tick() {
	caller := make([]int16, FrameSamples)
	var agent []int16
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.jb.frame(caller)
	remote := s.remote
	if s.hold {
		remote = netip.AddrPort{}
	}
	h := rtp.Header{Version: 2, PayloadType: s.codec.Audio.PT, SequenceNumber: s.seq, Timestamp: s.ts, SSRC: s.ssrc}
	var payload []byte
	if job := s.nextDigit(); job != nil {
		h.PayloadType = uint8(s.codec.Event)
		h.Timestamp, h.Marker = job.ts, job.step == 0
		payload = job.packet(s.buf[12:12])
	} else if n := len(s.out); n > 0 {
		take := min(n, FrameSamples)
		agent = make([]int16, FrameSamples)
		copy(agent, s.out[:take])
		s.out = s.out[:copy(s.out, s.out[take:])]
		h.Marker = !s.talking
		s.talking = true
		s.sent.Add(int64(take))
	} else {
		s.talking = false
	}
	s.mu.Unlock()

	if payload == nil {
		src := agent
		if src == nil {
			src = silence[:]
		}
		payload = encode(s.buf[12:12], s.codec.Alaw(), src)
	}
	s.seq++
	s.ts += FrameSamples
	s.ticks++
	if remote.IsValid() {
		if _, err := h.MarshalTo(s.buf[:12]); err == nil {
			pkt := s.buf[:12+len(payload)]
			if _, err := s.conn.WriteToUDPAddrPort(pkt, remote); err == nil {
				s.mu.Lock()
				s.stats.PacketsSent++
				s.rx.sentPkts++
				s.rx.octets += uint32(len(payload))
				s.mu.Unlock()
			}
		}
		if s.ticks%rtcpEvery == 0 {
			s.sendReport()
		}
	}
	s.deliver(dial.Input{PCM: caller})
	s.mu.Lock()
	if s.rec != nil {
		select {
		case s.rec <- recFrame{caller, agent}:
		default:
		}
	}
	s.mu.Unlock()
}

var silence [FrameSamples]int16

// readRTP reads the peer's packets until Close.
func (s *Session) readRTP() {
	defer s.wg.Done()
	buf := make([]byte, 1500)
	pcm := make([]int16, 0, 1500)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		digit := s.receive(buf[:n], from, pcm)
		if digit != 0 {
			s.deliver(dial.Input{Digit: digit})
		}
	}
}

// receive takes one datagram; it returns a DTMF digit that starts in it.
func (s *Session) receive(b []byte, from netip.AddrPort, pcm []int16) byte {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	var p rtp.Packet
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := p.Unmarshal(b); err != nil || p.Version != 2 {
		s.stats.Malformed++
		return 0
	}
	if s.latched && from.Addr() != s.remote.Addr() {
		// Not the host we latched onto: an off-path injection. Another
		// port of the same host is taken (a peer may send DTMF or audio
		// from a second socket).
		s.stats.Foreign++
		return 0
	}
	s.stats.PacketsReceived++
	if !s.latched {
		// Symmetric RTP: send where the peer's packets come from, which
		// behind NAT is not the address its SDP named.
		if from != s.remote {
			s.log.Debug("rtp: peer sends from another address; answering there", "sdp", s.remote, "from", from)
		}
		s.remote, s.latched = from, true
		s.remoteRTCP = netip.AddrPortFrom(from.Addr(), from.Port()+1)
	}
	switch {
	case s.codec.Event >= 0 && int(p.PayloadType) == s.codec.Event:
		ev, ok := parseEvent(p.Payload)
		if !ok {
			s.stats.Malformed++
			return 0
		}
		if s.haveEvent && p.Timestamp == s.lastEvent {
			return 0 // the same event again (its updates and the 3 end packets)
		}
		s.lastEvent, s.haveEvent = p.Timestamp, true
		if d := eventDigit(ev.code); d != 0 {
			s.stats.DigitsReceived++
			return d
		}
	case p.PayloadType == PCMU || p.PayloadType == PCMA:
		if !s.havePeer || p.SSRC != s.peerSSRC {
			if s.havePeer {
				s.jb.start(p.Timestamp) // a new stream: its timestamps start anywhere
				s.rx = reception{sentPkts: s.rx.sentPkts, octets: s.rx.octets}
			}
			s.peerSSRC, s.havePeer = p.SSRC, true
		}
		s.rx.note(p.SequenceNumber, p.Timestamp, time.Now())
		// Either law is decoded: a peer that answered with both may use
		// the other one.
		s.jb.put(p.Timestamp, decode(pcm[:0], p.PayloadType == PCMA, p.Payload))
	}
	return 0
}

// SendDigits sends DTMF: RFC 4733 events on the call's clock, or SIP INFO
// when the peer took no telephone-event. It returns once they are sent.
func (s *Session) SendDigits(ctx context.Context, digits string) error {
	for i := range len(digits) {
		if eventCode(digits[i]) < 0 {
			return fmt.Errorf("media: %q is not a DTMF digit", digits[i])
		}
	}
	s.mu.Lock()
	if s.closed || !s.started {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.codec.Event < 0 {
		s.mu.Unlock()
		if s.opt.SendInfo == nil {
			return errors.New("media: the peer takes no telephone-event and SIP INFO is not available")
		}
		for i := range len(digits) {
			if err := s.opt.SendInfo(ctx, digits[i]); err != nil {
				return fmt.Errorf("media: SIP INFO: %w", err)
			}
		}
		return nil
	}
	jobs := make([]*digitJob, 0, len(digits))
	for i := range len(digits) {
		j := &digitJob{code: eventCode(digits[i]), done: make(chan struct{})}
		jobs = append(jobs, j)
		s.digits = append(s.digits, j)
	}
	s.mu.Unlock()
	for _, j := range jobs {
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if s.isClosed() {
		return ErrClosed
	}
	return nil
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
