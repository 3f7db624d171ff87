package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/agentd/agentd/dial"
)

// TelephonyConfig configures the real dialers: --dialer sip uses SIP,
// --dialer livekit uses LiveKit. Only the chosen one is checked.
type TelephonyConfig struct {
	SIP     dial.SIPConfig
	LiveKit dial.LiveKitConfig
}

// newTelephonyDialer builds the sip or livekit dialer. The SIP dialer holds
// a socket: wireTelephony registers its Close.
func newTelephonyDialer(name string, cfg TelephonyConfig, log *slog.Logger) (dial.Dialer, error) {
	if err := checkTelephony(name, cfg); err != nil {
		return nil, err
	}
	switch name {
	case "sip":
		d, err := dial.NewSIP(cfg.SIP, log)
		if err != nil {
			return nil, fmt.Errorf("--dialer sip: %w", err)
		}
		return d, nil
	case "livekit":
		d, err := dial.NewLiveKit(cfg.LiveKit, log)
		if err != nil {
			return nil, fmt.Errorf("--dialer livekit: %w", err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("--dialer %q is not a telephony dialer", name)
}

// checkTelephony names the missing settings of the chosen dialer by flag
// and environment variable (cmd/telephony.go), which says more to an
// operator than the dialer's own "trunk address is required".
func checkTelephony(name string, cfg TelephonyConfig) error {
	var missing []string
	need := func(v, flag, env string) {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, fmt.Sprintf("--%s (env %s)", flag, env))
		}
	}
	switch name {
	case "sip":
		need(cfg.SIP.Trunk, "sip-trunk", "AGENTD_SIP_TRUNK")
	case "livekit":
		l := cfg.LiveKit
		need(l.URL, "livekit-url", "AGENTD_LIVEKIT_URL")
		need(l.APIKey, "livekit-api-key", "AGENTD_LIVEKIT_API_KEY")
		need(l.APISecret, "livekit-api-secret", "AGENTD_LIVEKIT_API_SECRET")
		need(l.OutboundTrunkID, "livekit-trunk-id", "AGENTD_LIVEKIT_TRUNK_ID")
		need(l.AgentName, "livekit-agent-name", "AGENTD_LIVEKIT_AGENT_NAME")
	}
	if len(missing) > 0 {
		return fmt.Errorf("--dialer %s needs %s", name, strings.Join(missing, ", "))
	}
	return nil
}

// wireTelephony finishes the setup of a real dialer built by newDialer: the
// SIP socket is closed with the app (after the dial queue stopped, so calls
// in flight are hung up by the queue's drain first), and a LiveKit outbound
// trunk is checked in the background at start. A wrong trunk id or an
// unreachable server is only logged: the server still starts (calls then
// fail or wait with a clear reason) so that LiveKit may come up later.
// A dialer given by the embedder (CallsConfig.DialerImpl) is theirs to close.
func (a *App) wireTelephony(d dial.Dialer) {
	if d == nil || a.cfg.Calls.DialerImpl != nil {
		return
	}
	if c, ok := d.(io.Closer); ok {
		a.onClose(c.Close)
	}
	if lk, ok := d.(*dial.LiveKit); ok {
		a.goWorker(func(ctx context.Context) error {
			if err := lk.CheckTrunk(ctx); err != nil {
				if ctx.Err() == nil {
					a.log.Warn("livekit: outbound trunk check failed; calls will fail until it is fixed",
						"trunk", a.cfg.Calls.Telephony.LiveKit.OutboundTrunkID, "err", err)
				}
				return nil
			}
			a.log.Info("livekit: outbound trunk found", "trunk", a.cfg.Calls.Telephony.LiveKit.OutboundTrunkID)
			return nil
		})
	}
}

// liveKit is the LiveKit dialer when --dialer is livekit (also when given
// as CallsConfig.DialerImpl), else nil: webhooks are then not served.
func (s *Server) liveKit() *dial.LiveKit {
	lk, _ := s.calls.dialer.(*dial.LiveKit)
	return lk
}
