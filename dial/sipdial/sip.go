// Package sipdial is the direct SIP dialer (--dialer sip): outbound calls by
// SIP INVITE to one trunk, and inbound INVITEs to a voice agent's number,
// signalling only. It implements dial.Dialer and reports inbound calls to
// a dial.Inbound.
package sipdial

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// SIP defaults. The response timeout is the dialer's own hard deadline for
// the trunk's first answer: sipgo alone would retransmit the INVITE until
// Timer B (32 s) before giving up on a silent trunk.
const (
	DefaultRingTimeout     = 30 * time.Second
	DefaultResponseTimeout = 5 * time.Second
	DefaultMaxCallDuration = time.Hour

	// sipHangupGrace bounds how long Dial waits for the trunk to confirm a
	// CANCEL or BYE before it reports the outcome anyway.
	sipHangupGrace = 3 * time.Second
)

// Config configures the direct SIP dialer.
type Config struct {
	Trunk           string        // trunk host:port (port 5060 when left out); required
	Transport       string        // "udp" (default) or "tcp"
	Username        string        // digest user for 401/407 challenges
	Password        string        // digest password; empty means no auth
	FromDomain      string        // host of the From URI; default the trunk host
	ListenAddr      string        // local SIP address; default 127.0.0.1:0 for a loopback trunk, else 0.0.0.0:0
	RingTimeout     time.Duration // from INVITE to answer; CANCEL and no_answer after it (default 30 s)
	ResponseTimeout time.Duration // for the trunk's first response of any kind (default 5 s)
	MaxCallDuration time.Duration // an answered call is hung up after this (default 1 h)
	PublicAddr      string        // IP[:port] written into Contact, Via and SDP instead of the local address (behind NAT)
	RTPPorts        string        // UDP range for RTP/RTCP, "lo-hi" (default media.DefaultPorts)
	// Talker speaks on every answered call, outbound and inbound; nil: the
	// call's media runs (silence is sent) and nobody speaks.
	Talker dial.Talker
}

// SIP places calls by direct SIP signalling to one trunk, with their audio
// as RTP (dial/media) on a port of the RTP range; an answered call is
// handed to the Talker. One SIP user agent and socket serve all
// concurrent calls.
type Dialer struct {
	cfg       Config
	log       *slog.Logger
	trunkHost string
	trunkPort int
	host      string // address put in Via, Contact and SDP
	port      int
	laddr     sip.Addr // local socket requests leave from (UDP only)
	contactHd sip.ContactHeader
	public    netip.AddrPort // --sip-public-addr; port 0 when only the IP was given
	ports     *media.Ports
	mediaBind netip.Addr // RTP sockets bind here
	sdpAddr   netip.Addr // and the SDP names this
	media     sync.Map   // SIP Call-ID -> *callMedia of calls in progress
	refers    sync.Map   // SIP Call-ID -> chan int: sipfrag codes of a REFER's NOTIFYs (transfer.go)

	ua         *sipgo.UserAgent
	client     *sipgo.Client
	dialogs    *sipgo.DialogClientCache
	inDialogs  *sipgo.DialogServerCache // answered inbound calls
	inbound    dial.Inbound             // nil: INVITEs are refused
	stop       context.CancelFunc       // stops the listener
	closing    context.Context          // done once Close starts: hangs up calls
	closeCalls context.CancelFunc

	mu        sync.Mutex
	closed    bool
	closeOnce sync.Once
	closeErr  error
	calls     sync.WaitGroup // Dial calls in flight
	bg        sync.WaitGroup // goroutines that finish a transaction after Dial returned
}

// New validates cfg, binds the local SIP socket and starts serving it
// (BYE from callees, OPTIONS keepalives). Close releases it.
func New(cfg Config, log *slog.Logger) (*Dialer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("dialer", "sip")
	s := &Dialer{cfg: cfg, log: log}
	if err := s.configure(); err != nil {
		return nil, err
	}

	tpLog := sip.WithTransportLayerLogger(log)
	txLog := sip.WithTransactionLayerLogger(log)
	ua, err := sipgo.NewUA(
		sipgo.WithUserAgent("agentd"),
		sipgo.WithUserAgentHostname(s.host),
		sipgo.WithUserAgentTransportLayerOptions(tpLog),
		sipgo.WithUserAgentTransactionLayerOptions(txLog),
	)
	if err != nil {
		return nil, fmt.Errorf("sip user agent: %w", err)
	}
	srv, err := sipgo.NewServer(ua, sipgo.WithServerLogger(log))
	if err != nil {
		ua.Close()
		return nil, fmt.Errorf("sip server: %w", err)
	}

	serve, err := s.listen(srv)
	if err != nil {
		ua.Close()
		return nil, err
	}
	opts := []sipgo.ClientOption{
		sipgo.WithClientLogger(log),
		sipgo.WithClientHostname(s.host),
		sipgo.WithClientPort(s.port),
	}
	if s.cfg.Transport == "udp" {
		// Send from the listening socket so that responses, and the
		// callee's BYE, come back to the port named in Via and Contact.
		opts = append(opts, sipgo.WithClientConnectionAddr(s.laddr.String()))
	}
	s.client, err = sipgo.NewClient(ua, opts...)
	if err != nil {
		ua.Close()
		return nil, fmt.Errorf("sip client: %w", err)
	}
	contact := sip.ContactHeader{Address: sip.Uri{Scheme: "sip", User: "agentd", Host: s.host, Port: s.port}}
	if s.cfg.Transport == "tcp" {
		contact.Address.UriParams = sip.NewParams()
		contact.Address.UriParams.Add("transport", "tcp")
	}
	s.contactHd = contact
	s.dialogs = sipgo.NewDialogClientCache(s.client, contact)
	s.inDialogs = sipgo.NewDialogServerCache(s.client, contact)
	srv.OnBye(s.onBye)
	srv.OnOptions(func(req *sip.Request, tx sip.ServerTransaction) {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusOK, "OK", nil))
	})
	srv.OnInvite(s.onInvite) // sip_inbound.go
	srv.OnAck(s.onAck)
	srv.OnInfo(s.onInfo)     // sip_media.go
	srv.OnNotify(s.onNotify) // transfer.go

	s.ua = ua
	var listenCtx context.Context
	listenCtx, s.stop = context.WithCancel(context.Background())
	s.closing, s.closeCalls = context.WithCancel(context.Background())
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		serve(listenCtx)
	}()
	if s.cfg.Transport == "udp" {
		// Requests leave from the listening socket, which sipgo finds in its
		// pool only once ServeUDP has registered it.
		pool := ua.TransportLayer().Pool("udp")
		for deadline := time.Now().Add(2 * time.Second); pool.Size() == 0; {
			if time.Now().After(deadline) {
				s.Close()
				return nil, errors.New("sip: UDP listener did not start")
			}
			time.Sleep(time.Millisecond)
		}
	}
	return s, nil
}

// configure checks the config, fills defaults and works out the local
// address the trunk can reach us at.
func (s *Dialer) configure() error {
	c := &s.cfg
	if c.Trunk == "" {
		return errors.New("sip: trunk address is required (host:port)")
	}
	host, portStr, err := net.SplitHostPort(c.Trunk)
	if err != nil {
		host, portStr = c.Trunk, "5060"
		if strings.Contains(c.Trunk, ":") && !strings.HasPrefix(c.Trunk, "[") {
			return fmt.Errorf("sip: bad trunk address %q: %v", c.Trunk, err)
		}
		host = strings.Trim(host, "[]")
	}
	port, err := strconv.Atoi(portStr)
	if host == "" || err != nil || port < 1 || port > 65535 {
		return fmt.Errorf("sip: bad trunk address %q: want host:port", c.Trunk)
	}
	s.trunkHost, s.trunkPort = host, port

	c.Transport = strings.ToLower(c.Transport)
	switch c.Transport {
	case "":
		c.Transport = "udp"
	case "udp", "tcp":
	default:
		return fmt.Errorf("sip: transport %q: want udp or tcp", c.Transport)
	}
	if c.FromDomain == "" {
		c.FromDomain = host
	}
	if c.RingTimeout <= 0 {
		c.RingTimeout = DefaultRingTimeout
	}
	if c.ResponseTimeout <= 0 {
		c.ResponseTimeout = DefaultResponseTimeout
	}
	c.ResponseTimeout = min(c.ResponseTimeout, c.RingTimeout)
	if c.MaxCallDuration <= 0 {
		c.MaxCallDuration = DefaultMaxCallDuration
	}
	if c.RTPPorts == "" {
		c.RTPPorts = media.DefaultPorts
	}
	lo, hi, err := media.ParsePorts(c.RTPPorts)
	if err != nil {
		return fmt.Errorf("--rtp-ports (AGENTD_RTP_PORTS) %w", err)
	}
	s.ports = media.NewPorts(lo, hi)
	if c.PublicAddr != "" {
		if s.public, err = parsePublicAddr(c.PublicAddr); err != nil {
			return err
		}
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "0.0.0.0:0"
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			c.ListenAddr = "127.0.0.1:0"
		}
	}
	return nil
}

// listen binds the local socket and returns the function that serves it
// until its context ends.
func (s *Dialer) listen(srv *sipgo.Server) (func(context.Context), error) {
	addr, err := net.ResolveUDPAddr("udp", s.cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("sip: listen address %q: %w", s.cfg.ListenAddr, err)
	}
	network := "udp"
	if addr.IP == nil || addr.IP.To4() != nil {
		network = "udp4"
		if addr.IP == nil {
			addr.IP = net.IPv4zero
		}
	}
	var local net.Addr
	var serve func(context.Context)
	if s.cfg.Transport == "udp" {
		conn, err := net.ListenUDP(network, addr)
		if err != nil {
			return nil, fmt.Errorf("sip: listen: %w", err)
		}
		local = conn.LocalAddr()
		serve = func(ctx context.Context) {
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			defer stop()
			srv.ServeUDP(conn)
		}
	} else {
		tcpNet := strings.Replace(network, "udp", "tcp", 1)
		l, err := net.ListenTCP(tcpNet, (*net.TCPAddr)(addr))
		if err != nil {
			return nil, fmt.Errorf("sip: listen: %w", err)
		}
		local = l.Addr()
		serve = func(ctx context.Context) {
			stop := context.AfterFunc(ctx, func() { l.Close() })
			defer stop()
			srv.ServeTCP(l)
		}
	}
	lhost, lport, _ := net.SplitHostPort(local.String())
	s.port, _ = strconv.Atoi(lport)
	s.laddr = sip.Addr{IP: net.ParseIP(lhost), Port: s.port}
	s.host = lhost
	s.mediaBind, _ = netip.ParseAddr(lhost)
	s.mediaBind = s.mediaBind.Unmap()
	if ip := net.ParseIP(lhost); ip == nil || ip.IsUnspecified() {
		// Bound to all interfaces: advertise the address of the interface
		// that routes to the trunk. A UDP "connect" sends no packet.
		probe, err := net.Dial("udp", net.JoinHostPort(s.trunkHost, strconv.Itoa(s.trunkPort)))
		if err != nil {
			return nil, fmt.Errorf("sip: no route to trunk %s: %w", s.cfg.Trunk, err)
		}
		s.host, _, _ = net.SplitHostPort(probe.LocalAddr().String())
		probe.Close()
	}
	if s.public.IsValid() {
		// Behind NAT: the trunk must see the public address (a port
		// forwarded to ours keeps its number unless one was given).
		s.host = s.public.Addr().String()
		if s.public.Port() != 0 {
			s.port = int(s.public.Port())
		}
	}
	s.sdpAddr, _ = netip.ParseAddr(s.host)
	return serve, nil
}

// parsePublicAddr reads --sip-public-addr: an IP address, optionally
// with the port forwarded to the SIP socket.
func parsePublicAddr(v string) (netip.AddrPort, error) {
	bad := fmt.Errorf("--sip-public-addr (AGENTD_SIP_PUBLIC_ADDR) %q: want an IP address, optionally with :port", v)
	if ap, err := netip.ParseAddrPort(v); err == nil {
		if ap.Port() == 0 || ap.Addr().IsUnspecified() {
			return netip.AddrPort{}, bad
		}
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	a, err := netip.ParseAddr(strings.Trim(v, "[]"))
	if err != nil || a.IsUnspecified() || a.Zone() != "" {
		return netip.AddrPort{}, bad
	}
	return netip.AddrPortFrom(a.Unmap(), 0), nil
}

// Name reports "sip".
func (s *Dialer) Name() string { return "sip" }

// Close hangs up the calls in flight (as if their contexts were
// cancelled), waits for them, and releases the socket. Later calls wait
// for the first and return its result.
func (s *Dialer) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()

		s.closeCalls() // the listener stays up so CANCEL/BYE get answered
		s.calls.Wait()
		s.stop()
		s.closeErr = s.ua.Close() // ends transactions still waiting in the background
		s.bg.Wait()
	})
	return s.closeErr
}

// contact is the Contact header of our requests: the listening socket.
func (s *Dialer) contact() *sip.ContactHeader { return &s.contactHd }

func (s *Dialer) onBye(req *sip.Request, tx sip.ServerTransaction) {
	if err := s.dialogs.ReadBye(req, tx); err == nil {
		return
	}
	if err := s.inDialogs.ReadBye(req, tx); err != nil {
		s.respond(tx, sip.NewResponseFromRequest(req, sip.StatusCallTransactionDoesNotExists, "dial.Call/Transaction Does Not Exist", nil))
	}
}

func (s *Dialer) respond(tx sip.ServerTransaction, res *sip.Response) {
	if err := tx.Respond(res); err != nil {
		s.log.Warn("sip respond", "status", res.StatusCode, "err", err)
	}
}
