package cmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/cmd/cliflags"
	"github.com/agentd/agentd/dial/media"
	"github.com/agentd/agentd/dial/sipdial"
)

// addTelephonyFlags adds the settings of the sip and livekit dialers to
// serve. Only the dialer chosen with --dialer is used and checked (by
// calls.CheckDialer, which names a missing flag and its variable). Secrets are better
// given by environment than by flag (a flag shows in ps).
func addTelephonyFlags(c *cobra.Command, cfg *calls.TelephonyConfig) {
	f := c.Flags()
	s := &cfg.SIP
	f.StringVar(&s.Trunk, "sip-trunk", cliflags.String("AGENTD_SIP_TRUNK", ""), "sip dialer: trunk host:port INVITEs are sent to (port 5060 if left out) (env AGENTD_SIP_TRUNK)")
	f.StringVar(&s.Transport, "sip-transport", cliflags.String("AGENTD_SIP_TRANSPORT", "udp"), "sip dialer: udp or tcp (env AGENTD_SIP_TRANSPORT)")
	f.StringVar(&s.Username, "sip-username", cliflags.String("AGENTD_SIP_USERNAME", ""), "sip dialer: digest user answering the trunk's 401/407 challenge (env AGENTD_SIP_USERNAME)")
	f.StringVar(&s.Password, "sip-password", cliflags.String("AGENTD_SIP_PASSWORD", ""), "sip dialer: digest password; empty means no authentication (env AGENTD_SIP_PASSWORD)")
	f.StringVar(&s.FromDomain, "sip-from-domain", cliflags.String("AGENTD_SIP_FROM_DOMAIN", ""), "sip dialer: host of the From URI (default: the trunk host) (env AGENTD_SIP_FROM_DOMAIN)")
	f.StringVar(&s.ListenAddr, "sip-listen", cliflags.String("AGENTD_SIP_LISTEN", ""), "sip dialer: local SIP address (default 127.0.0.1:0 for a loopback trunk, else 0.0.0.0:0) (env AGENTD_SIP_LISTEN)")
	f.DurationVar(&s.RingTimeout, "sip-ring-timeout", cliflags.Duration("AGENTD_SIP_RING_TIMEOUT", sipdial.DefaultRingTimeout), "sip dialer: from INVITE to answer; then CANCEL and no_answer (env AGENTD_SIP_RING_TIMEOUT)")
	f.DurationVar(&s.ResponseTimeout, "sip-response-timeout", cliflags.Duration("AGENTD_SIP_RESPONSE_TIMEOUT", sipdial.DefaultResponseTimeout), "sip dialer: wait for the trunk's first response before failing the call (env AGENTD_SIP_RESPONSE_TIMEOUT)")
	f.StringVar(&s.PublicAddr, "sip-public-addr", cliflags.String("AGENTD_SIP_PUBLIC_ADDR", ""), "sip dialer: public IP[:port] written into Contact and SDP when agentd is behind NAT (env AGENTD_SIP_PUBLIC_ADDR)")
	f.StringVar(&s.RTPPorts, "rtp-ports", cliflags.String("AGENTD_RTP_PORTS", media.DefaultPorts), "sip dialer: UDP port range for call audio (RTP and RTCP) (env AGENTD_RTP_PORTS)")
	f.DurationVar(&s.MaxCallDuration, "sip-max-call-duration", cliflags.Duration("AGENTD_SIP_MAX_CALL_DURATION", sipdial.DefaultMaxCallDuration), "sip dialer: an answered call is hung up (BYE) after this (env AGENTD_SIP_MAX_CALL_DURATION)")

	l := &cfg.LiveKit
	f.StringVar(&l.URL, "livekit-url", cliflags.String("AGENTD_LIVEKIT_URL", ""), "livekit dialer: server URL, http(s):// or ws(s):// (env AGENTD_LIVEKIT_URL)")
	f.StringVar(&l.APIKey, "livekit-api-key", cliflags.String("AGENTD_LIVEKIT_API_KEY", ""), "livekit dialer: API key; also the issuer webhooks must be signed by (env AGENTD_LIVEKIT_API_KEY)")
	f.StringVar(&l.APISecret, "livekit-api-secret", cliflags.String("AGENTD_LIVEKIT_API_SECRET", ""), "livekit dialer: API secret (prefer the env variable) (env AGENTD_LIVEKIT_API_SECRET)")
	f.StringVar(&l.OutboundTrunkID, "livekit-trunk-id", cliflags.String("AGENTD_LIVEKIT_TRUNK_ID", ""), "livekit dialer: SIP outbound trunk id (ST_...), checked at start (env AGENTD_LIVEKIT_TRUNK_ID)")
	f.StringVar(&l.InboundTrunkID, "livekit-inbound-trunk-id", cliflags.String("AGENTD_LIVEKIT_INBOUND_TRUNK_ID", ""), "livekit dialer: only SIP participants of this inbound trunk (ST_...) are recorded as inbound calls; empty: any in a room agentd did not create (env AGENTD_LIVEKIT_INBOUND_TRUNK_ID)")
	f.StringVar(&l.AgentName, "livekit-agent-name", cliflags.String("AGENTD_LIVEKIT_AGENT_NAME", ""), "livekit dialer: agent dispatched into each call's room (env AGENTD_LIVEKIT_AGENT_NAME)")
	f.DurationVar(&l.RingTimeout, "livekit-ring-timeout", cliflags.Duration("AGENTD_LIVEKIT_RING_TIMEOUT", 30*time.Second), "livekit dialer: how long the callee may ring (env AGENTD_LIVEKIT_RING_TIMEOUT)")
	f.DurationVar(&l.PollInterval, "livekit-poll-interval", cliflags.Duration("AGENTD_LIVEKIT_POLL_INTERVAL", 5*time.Second), "livekit dialer: room check of an answered call when no webhook ends it; negative disables (env AGENTD_LIVEKIT_POLL_INTERVAL)")
}
