package dial

import (
	"fmt"
	"net"
)

// CheckSIPConfig validates cfg as NewSIP does (trunk address, transport,
// local address), without binding a socket or resolving names, so that a
// start can refuse a bad setting before it touches the database.
func CheckSIPConfig(cfg SIPConfig) error {
	s := &SIP{cfg: cfg}
	if err := s.configure(); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(s.cfg.ListenAddr); err != nil {
		return fmt.Errorf("sip: listen address %q: want host:port", s.cfg.ListenAddr)
	}
	return nil
}

// CheckLiveKitConfig validates cfg as NewLiveKit does (URL, key, secret,
// trunk id, agent name), without any request.
func CheckLiveKitConfig(cfg LiveKitConfig) error {
	_, err := NewLiveKit(cfg, nil)
	return err
}
