package sipdial

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// Probe is a trunk's answer to OPTIONS.
type Probe struct {
	Status int           // SIP status of the final answer, e.g. 200
	Reason string        // its reason phrase
	RTT    time.Duration // from the request to the final answer
	Server string        // the answer's Server or User-Agent header, if any
}

// ProbeTrunk sends one OPTIONS to the trunk of cfg from a socket of its own
// (bound as the dialer binds it) and waits for the final answer, at most
// cfg.ResponseTimeout (default 5 s). A 401/407 challenge is answered once
// with the digest credentials when a password is set. The error is set when
// no SIP answer came at all (nothing listens, a firewall drops it, wrong
// transport); any answer, even 4xx, shows a SIP server at the address and
// is for the caller to judge. The local port is always a fresh one, so a
// probe works beside a running server bound to a fixed --sip-listen port.
func ProbeTrunk(ctx context.Context, cfg Config) (Probe, error) {
	if host, _, err := net.SplitHostPort(cfg.ListenAddr); err == nil {
		cfg.ListenAddr = net.JoinHostPort(host, "0")
	}
	s, err := New(cfg, nil)
	if err != nil {
		return Probe{}, err
	}
	defer s.Close()
	uri := sip.Uri{Scheme: "sip", Host: s.trunkHost, Port: s.trunkPort}
	req := sip.NewRequest(sip.OPTIONS, uri)
	from := &sip.FromHeader{Address: sip.Uri{Scheme: "sip", User: "agentd", Host: s.cfg.FromDomain}}
	from.Params.Add("tag", sip.GenerateTagN(16))
	req.AppendHeader(from)
	req.AppendHeader(&sip.ToHeader{Address: uri})
	req.AppendHeader(sip.HeaderClone(s.contact()))
	req.AppendHeader(sip.NewHeader("Accept", "application/sdp"))
	req.AppendHeader(sip.NewHeader("User-Agent", "agentd"))
	if s.cfg.Transport == "tcp" {
		req.SetTransport("TCP")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ResponseTimeout)
	defer cancel()
	start := time.Now()
	res, err := s.client.Do(ctx, req)
	if err == nil && (res.StatusCode == sip.StatusUnauthorized || res.StatusCode == sip.StatusProxyAuthRequired) && s.cfg.Password != "" {
		res, err = s.client.DoDigestAuth(ctx, req, res, sipgo.DigestAuth{Username: s.cfg.Username, Password: s.cfg.Password})
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", s.cfg.ResponseTimeout)
		}
		return Probe{}, fmt.Errorf("sip: OPTIONS to trunk %s (%s): %w", s.cfg.Trunk, s.cfg.Transport, err)
	}
	p := Probe{Status: res.StatusCode, Reason: res.Reason, RTT: time.Since(start)}
	for _, name := range []string{"Server", "User-Agent"} {
		if h := res.GetHeader(name); h != nil && p.Server == "" {
			p.Server = h.Value()
		}
	}
	return p, nil
}

// CheckConfig validates cfg as New does (trunk address, transport, local
// address), without binding a socket or resolving names, so that a start
// can refuse a bad setting before it touches the database.
func CheckConfig(cfg Config) error {
	s := &Dialer{cfg: cfg}
	if err := s.configure(); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(s.cfg.ListenAddr); err != nil {
		return fmt.Errorf("sip: listen address %q: want host:port", s.cfg.ListenAddr)
	}
	return nil
}
