package media

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/pion/rtcp"
)

// The reception block counts what the peer's sequence numbers say was
// lost, across a wrap of the 16-bit sequence.
func TestReceptionBlock(t *testing.T) {
	var r reception
	now := time.Now()
	for i := range 100 {
		if i%20 == 7 { // 5 lost
			continue
		}
		r.note(uint16(65500+i), uint32(i*FrameSamples), now.Add(time.Duration(i)*FrameDuration))
	}
	b := r.block(42, now)
	if b.SSRC != 42 || b.TotalLost != 5 || b.LastSequenceNumber != 1<<16+99-36 || b.FractionLost != 5*256/100 {
		t.Fatalf("%+v", b)
	}
}

// A sender report reaches the peer's RTCP port and parses.
func TestSenderReport(t *testing.T) {
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	s, err := NewPorts(33200, 33209).Open(loopback, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.remoteRTCP = netip.AddrPortFrom(loopback, uint16(peer.LocalAddr().(*net.UDPAddr).Port))
	s.sendReport()
	buf := make([]byte, 1500)
	peer.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := peer.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	pkts, err := rtcp.Unmarshal(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	if sr, ok := pkts[0].(*rtcp.SenderReport); !ok || sr.SSRC != s.ssrc {
		t.Fatalf("%#v", pkts[0])
	}
}
