package calls

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/dial/livekitdial"
	"github.com/agentd/agentd/dial/sipdial"
)

// Validate checks the queue settings and the chosen dialer's settings the
// way the dialer's constructor will, naming flags, without a socket or a
// request: a start refuses a bad setting before it opens the database.
// A missing setting is named by its flag and variable (CheckDialer).
func (c Config) Validate() error {
	if c.DialCPS < 0 {
		return errors.New("--dial-cps must be more than 0")
	}
	if c.MaxConcurrent < 0 {
		return errors.New("--max-concurrent-calls must be at least 1")
	}
	if c.DialLog != "" && !isDir(filepath.Dir(c.DialLog)) {
		return fmt.Errorf("--dial-log %s: folder does not exist", c.DialLog)
	}
	if c.DialerImpl != nil {
		return nil
	}
	switch c.Dialer {
	case "", "none", "sim":
		return nil
	}
	if err := CheckDialer(c.Dialer, c.Telephony); err != nil {
		return err
	}
	var err error
	if c.Dialer == "sip" {
		err = sipdial.CheckConfig(c.Telephony.SIP)
	} else {
		err = livekitdial.CheckLiveKitConfig(c.Telephony.LiveKit)
	}
	if err != nil {
		return fmt.Errorf("--dialer %s: %w", c.Dialer, err)
	}
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// CheckDialer refuses an unknown --dialer and names the missing settings
// of the chosen one by flag and environment variable, which says more to
// an operator than the dialer's own "trunk address is required".
func CheckDialer(name string, cfg TelephonyConfig) error {
	var missing []string
	need := func(v, flag, env string) {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, fmt.Sprintf("--%s (env %s)", flag, env))
		}
	}
	switch name {
	case "", "none", "sim":
	case "sip":
		need(cfg.SIP.Trunk, "sip-trunk", "AGENTD_SIP_TRUNK")
	case "livekit":
		l := cfg.LiveKit
		need(l.URL, "livekit-url", "AGENTD_LIVEKIT_URL")
		need(l.APIKey, "livekit-api-key", "AGENTD_LIVEKIT_API_KEY")
		need(l.APISecret, "livekit-api-secret", "AGENTD_LIVEKIT_API_SECRET")
		need(l.OutboundTrunkID, "livekit-trunk-id", "AGENTD_LIVEKIT_TRUNK_ID")
		need(l.AgentName, "livekit-agent-name", "AGENTD_LIVEKIT_AGENT_NAME")
	default:
		return fmt.Errorf("--dialer %q: use none, sim, sip or livekit", name)
	}
	if len(missing) > 0 {
		return fmt.Errorf("--dialer %s needs %s", name, strings.Join(missing, ", "))
	}
	return nil
}
