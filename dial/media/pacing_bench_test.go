package media

import (
	"fmt"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/pion/rtp"
)

// BenchmarkPacing runs N calls at once on loopback, each sending a
// continuous tone, and measures on the wire (one receiving socket) the
// spacing of each call's consecutive packets, and the process's CPU time
// per call. Run with:
//
//	go test -run '^$' -bench Pacing -benchtime 1x ./dial/media
func BenchmarkPacing(b *testing.B) {
	for _, n := range []int{50, 100, 200} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			for range b.N {
				benchPacing(b, n, 5*time.Second)
			}
		})
	}
}

func benchPacing(b *testing.B, n int, d time.Duration) {
	rx, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer rx.Close()
	rx.SetReadBuffer(8 << 20)
	ports := NewPorts(40000, 40000+2*n+1)
	rxPort := rx.LocalAddr().(*net.UDPAddr).Port
	var sessions []*Session
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	for range n {
		s, err := ports.Open(loopback, Options{})
		if err != nil {
			b.Fatal(err)
		}
		sessions = append(sessions, s)
		s.Write(tone(440, int(d/time.Second+2)*SampleRate))
		if err := s.Start(Desc{Addr: loopback, Port: rxPort, Proto: "RTP/AVP", Formats: allFormats}); err != nil {
			b.Fatal(err)
		}
	}
	// Settle, then measure.
	time.Sleep(200 * time.Millisecond)
	last := map[uint32]time.Time{}
	var gaps []time.Duration
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	buf := make([]byte, 1500)
	var h rtp.Header
	rx.SetReadDeadline(start.Add(d))
	for {
		m, err := rx.Read(buf)
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
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	if len(gaps) == 0 {
		b.Fatal("no packets")
	}
	slices.Sort(gaps)
	pct := func(p float64) float64 { return float64(gaps[int(p*float64(len(gaps)-1))]) / 1e6 }
	within := 0
	for _, g := range gaps {
		if g >= 15*time.Millisecond && g <= 25*time.Millisecond {
			within++
		}
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.01), "p1-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(100*float64(within)/float64(len(gaps)), "%within-20±5ms")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds()/float64(n), "cpu-%core/call")
	b.ReportMetric(float64(len(gaps)+len(last))/wall.Seconds(), "pkts/s")
}
