package media

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// DefaultPorts is the default --rtp-ports range.
const DefaultPorts = "10000-20000"

// ErrNoPorts is returned when every RTP port of the range is taken.
var ErrNoPorts = errors.New("rtp: no free port in the range")

// ParsePorts reads a port range "lo-hi". RTP takes an even port and RTCP
// the odd one above it, so the range must hold at least one such pair.
func ParsePorts(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q: want a range of UDP ports like 10000-20000", s)
	}
	if lo < 1024 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("%q: want ports between 1024 and 65535, low first", s)
	}
	if lo%2 == 1 {
		lo++
	}
	if hi-lo < 1 {
		return 0, 0, fmt.Errorf("%q: the range must hold an even port and the odd one above it (RTP and RTCP)", s)
	}
	return lo, hi, nil
}

// Ports hands out RTP/RTCP port pairs of a range. A pair is never handed
// out twice while in use, and freed pairs go to the back of the line so a
// late packet of an ended call does not land in the next one.
type Ports struct {
	lo, pairs int
	mu        sync.Mutex
	used      map[int]bool // pair index
	next      int
}

// NewPorts takes the range ParsePorts read.
func NewPorts(lo, hi int) *Ports {
	return &Ports{lo: lo, pairs: (hi - lo + 1) / 2, used: map[int]bool{}}
}

// InUse is how many pairs are handed out.
func (p *Ports) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.used)
}

// listen binds the next free pair on ip. A port another process holds
// is skipped.
func (p *Ports) listen(ip netip.Addr) (rtp, rtcp *net.UDPConn, release func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.pairs {
		i := p.next
		p.next = (p.next + 1) % p.pairs
		if p.used[i] {
			continue
		}
		port := p.lo + 2*i
		rtp, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port))))
		if err != nil {
			continue
		}
		rtcp, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port+1))))
		if err != nil {
			rtp.Close()
			continue
		}
		p.used[i] = true
		var once sync.Once
		return rtp, rtcp, func() {
			once.Do(func() {
				rtp.Close()
				rtcp.Close()
				p.mu.Lock()
				delete(p.used, i)
				p.mu.Unlock()
			})
		}, nil
	}
	return nil, nil, nil, ErrNoPorts
}
