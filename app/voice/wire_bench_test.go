package voice

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"
	"github.com/pion/rtp"
)

// Concurrent voice calls on the real RTP transport (dial/media over
// loopback), each running the whole loop on scripted services while one
// peer socket speaks to every call and receives every call's packets. The
// caller says "Yes, please." every 4 s, so turns (speech-to-text, the
// model, text-to-speech, resampling) run throughout the measurement. The
// spacing of each call's consecutive packets is measured on the wire; CPU
// is the whole test process (peer and scripted services included).
//
//	go test ./app/voice -run '^$' -bench CallsOnTheWire -benchtime 1x
func BenchmarkCallsOnTheWire(b *testing.B) {
	for _, n := range []int{50, 100, 150} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			for range b.N {
				benchOnTheWire(b, n, 8*time.Second)
			}
		})
	}
}

func benchOnTheWire(b *testing.B, n int, d time.Duration) {
	r := benchRig(b, map[string]any{"firstMessage": "Hello, this is Ada."})
	log := &turnLog{}
	r.build(log)
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer peer.Close()
	peer.SetReadBuffer(8 << 20)
	peerPort := peer.LocalAddr().(*net.UDPAddr).Port
	lo := netip.MustParseAddr("127.0.0.1")
	ports := media.NewPorts(42000, 42000+2*n+1)
	pcmu := []media.Format{{PT: 0, Name: "PCMU", Rate: 8000}, {PT: 101, Name: "TELEPHONE-EVENT", Rate: 8000}}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	targets := make([]netip.AddrPort, n)
	for i := range n {
		s, err := ports.Open(lo, media.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Start(media.Desc{Addr: lo, Port: peerPort, Proto: "RTP/AVP", Formats: pcmu}); err != nil {
			b.Fatal(err)
		}
		targets[i] = netip.AddrPortFrom(lo, uint16(s.Port()))
		id := r.newCall()
		wg.Go(func() {
			defer s.Close()
			r.svc.Talk(ctx, dial.Session{Call: dial.Call{ID: id}, Direction: "outbound", Media: s, MaxDuration: time.Hour})
		})
	}

	// The caller: 20 ms packets to every call, each call's script offset
	// so that the turns are spread over the 4 s cycle.
	speech := voiceOf(b, "Yes, please.")
	cycle := 4 * dial.SampleRate
	var stopPeer atomic.Bool
	peerDone := make(chan struct{})
	go func() {
		defer close(peerDone)
		var pkt [12 + dial.FrameSamples]byte
		t := time.NewTicker(dial.FrameDuration)
		defer t.Stop()
		for tick := 0; !stopPeer.Load(); tick++ {
			<-t.C
			for i, to := range targets {
				pos := (tick*dial.FrameSamples + i*cycle/n) % cycle
				h := rtp.Header{Version: 2, PayloadType: 0, SequenceNumber: uint16(tick), Timestamp: uint32(tick * dial.FrameSamples), SSRC: uint32(i + 1)}
				h.MarshalTo(pkt[:12])
				for k := range dial.FrameSamples {
					var v int16
					if j := pos + k - dial.SampleRate; j >= 0 && j < len(speech) {
						v = speech[j]
					}
					pkt[12+k] = ulaw(v)
				}
				peer.WriteToUDPAddrPort(pkt[:], to)
			}
		}
	}()

	time.Sleep(time.Second) // settle: every call answered and its clock running
	last := map[uint32]time.Time{}
	var gaps []time.Duration
	turns0 := log.count()
	cpu0 := cpuTime()
	start := time.Now()
	buf := make([]byte, 1500)
	var h rtp.Header
	peer.SetReadDeadline(start.Add(d))
	for {
		m, err := peer.Read(buf)
		if err != nil {
			break
		}
		now := time.Now()
		if _, err := h.Unmarshal(buf[:m]); err != nil {
			continue
		}
		if t, ok := last[h.SSRC]; ok {
			gaps = append(gaps, now.Sub(t))
		}
		last[h.SSRC] = now
	}
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	turns := log.count() - turns0
	stopPeer.Store(true)
	<-peerDone
	cancel()
	wg.Wait()

	if len(last) < n {
		b.Fatalf("%d of %d calls sent packets", len(last), n)
	}
	if turns < n {
		b.Errorf("%d turns answered in %s for %d calls", turns, wall, n)
	}
	slices.Sort(gaps)
	within := 0
	for _, g := range gaps {
		if g >= 15*time.Millisecond && g <= 25*time.Millisecond {
			within++
		}
	}
	ms := func(q float64) float64 { return float64(gaps[int(q*float64(len(gaps)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(100*float64(within)/float64(len(gaps)), "%within-20±5ms")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds()/float64(n), "cpu-%core/call")
	b.ReportMetric(float64(turns), "turns")
}

// ulaw is G.711 µ-law, the caller's side of the wire.
func ulaw(pcm int16) byte {
	const bias, clip = 0x84, 32635
	s := int(pcm)
	sign := 0
	if s < 0 {
		s, sign = -s, 0x80
	}
	s = min(s, clip) + bias
	exp := 7
	for mask := 0x4000; s&mask == 0 && exp > 0; mask >>= 1 {
		exp--
	}
	return byte(^(sign | exp<<4 | (s>>(exp+3))&0x0f))
}
