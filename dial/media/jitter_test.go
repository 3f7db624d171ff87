package media

import (
	"context"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"
)

// lossyPeer sends packets of 20 ms (PCMU) to a session the way a bad
// network delivers them: each one delayed by 0-maxDelay (so they also
// arrive out of order) and a share lost.
type lossyPeer struct {
	conn     *net.UDPConn
	to       netip.AddrPort
	loss     float64
	maxDelay time.Duration
	rng      *rand.Rand
	wg       sync.WaitGroup
	lost     map[int]bool
}

func newLossyPeer(t *testing.T, to int, loss float64, maxDelay time.Duration) *lossyPeer {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &lossyPeer{conn: c, to: netip.AddrPortFrom(loopback, uint16(to)), loss: loss, maxDelay: maxDelay,
		rng: rand.New(rand.NewPCG(1, 2)), lost: map[int]bool{}}
}

// send plays frames, one packet every 20 ms on the sender's clock.
func (p *lossyPeer) send(frames [][]int16) {
	start := time.Now()
	for k, f := range frames {
		if p.rng.Float64() < p.loss {
			p.lost[k] = true
			continue
		}
		h := rtp.Header{Version: 2, PayloadType: PCMU, SequenceNumber: uint16(1000 + k), Timestamp: uint32(5000 + k*FrameSamples), SSRC: 42, Marker: k == 0}
		b, _ := h.Marshal()
		b = encode(b, false, f)
		at := time.Duration(k)*FrameDuration + time.Duration(p.rng.Int64N(int64(p.maxDelay)))
		p.wg.Add(1)
		time.AfterFunc(time.Until(start.Add(at)), func() {
			defer p.wg.Done()
			p.conn.WriteToUDPAddrPort(b, p.to)
		})
	}
	p.wg.Wait()
}

// A stream with 5% loss and up to 40 ms of jitter (so reordered) plays
// out as one frame per tick, in order, with silence where packets were
// lost, and nothing dropped as late.
func TestJitterBufferLossyStream(t *testing.T) {
	ports := NewPorts(33000, 33099)
	s, err := ports.Open(loopback, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Nobody listens where the session sends; only its reception matters.
	if err := s.Start(Desc{Addr: loopback, Port: 9, Proto: "RTP/AVP", Formats: allFormats}); err != nil {
		t.Fatal(err)
	}
	const n = 250 // 5 s
	frames := make([][]int16, n)
	for k := range frames {
		frames[k] = make([]int16, FrameSamples)
		for i := range frames[k] {
			frames[k][i] = int16(500 + 80*k) // a level per packet shows the order
		}
	}
	peer := newLossyPeer(t, s.Port(), 0.05, 40*time.Millisecond)
	go peer.send(frames)

	ctx, cancel := context.WithTimeout(context.Background(), n*FrameDuration+500*time.Millisecond)
	defer cancel()
	start := time.Now()
	var levels []int16
	reads := 0
	for {
		in, err := s.Read(ctx)
		if err != nil {
			break
		}
		reads++
		f := in.PCM
		if f[0] == 0 {
			levels = append(levels, 0)
			continue
		}
		for _, v := range f {
			if v != f[0] {
				t.Fatalf("frame mixes two packets: %v", f)
			}
		}
		levels = append(levels, f[0])
	}
	elapsed := time.Since(start)
	// One frame per tick; a machine stalled for more than 100 ms skips
	// ticks (the clock starts again from now), hence the slack below.
	if want := int(elapsed / FrameDuration); reads < want*9/10 || reads > want+3 {
		t.Errorf("%d frames in %v, want one per 20 ms (%d)", reads, elapsed, want)
	}
	var last int16
	heard := 0
	for _, v := range levels {
		if v == 0 {
			continue
		}
		heard++
		if v < last {
			t.Fatalf("frames out of order: level %d after %d", v, last)
		}
		last = v
	}
	st := s.Stats()
	// A packet or two may still come late on a machine so loaded that
	// the sender's own timers slip well past the 40 ms (the delay then
	// grows); everything else must be heard. A stall of the reader itself
	// over 100 ms makes the buffer start again from the newest packet
	// (a resync, by design: a caller must not hear the past); the frames
	// it dropped then are counted by Resyncs, not heard, so the exact
	// count is checked only on a run without one. Order and loss still are.
	if st.Resyncs == 0 && (heard != n-len(peer.lost)-st.Late || st.Late > 3) {
		t.Errorf("heard %d packets' frames, sent %d (lost %d, late %d); stats %+v", heard, n-len(peer.lost), len(peer.lost), st.Late, st)
	}
	if len(peer.lost) < 5 {
		t.Errorf("lost by the network %d: stats %+v", len(peer.lost), st)
	}
	t.Logf("%d frames, %d lost by the network, stats %+v", reads, len(peer.lost), st)
}

// The same network carrying a tone: it is still a 440 Hz tone.
func TestJitterBufferLossyTone(t *testing.T) {
	ports := NewPorts(33100, 33199)
	s, err := ports.Open(loopback, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(Desc{Addr: loopback, Port: 9, Proto: "RTP/AVP", Formats: allFormats}); err != nil {
		t.Fatal(err)
	}
	const n = 100
	pcm := tone(440, n*FrameSamples)
	frames := make([][]int16, n)
	for k := range frames {
		frames[k] = pcm[k*FrameSamples : (k+1)*FrameSamples]
	}
	go newLossyPeer(t, s.Port(), 0.05, 40*time.Millisecond).send(frames)
	got, _ := readFor(t, s, n*FrameDuration+300*time.Millisecond)
	// Compare with what was sent, aligned on the first sample heard.
	first := 0
	for first < len(got) && got[first] == 0 {
		first++
	}
	got = got[first:]
	// Zero crossings between the nonzero samples of each frame (a lost
	// packet's silence, or part of one, is skipped).
	cross, voiced, pairs := 0, 0, 0
	for f := 0; f+FrameSamples <= len(got); f += FrameSamples {
		prev := -1
		for i, v := range got[f : f+FrameSamples] {
			if v == 0 {
				continue
			}
			voiced++
			if prev >= 0 {
				pairs += i - prev
				if (got[f+prev] < 0) != (v < 0) {
					cross++
				}
			}
			prev = i
		}
	}
	hz := float64(cross) / 2 / (float64(pairs) / SampleRate)
	if voiced < n*FrameSamples*80/100 || hz < 420 || hz > 460 || rms(got) < 4000 {
		t.Errorf("heard %d voiced samples at %.0f Hz, rms %.0f: want the 440 Hz tone with ~5%% gaps", voiced, hz, rms(got))
	}
}
