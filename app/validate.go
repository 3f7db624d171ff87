package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/embed"
)

// Validate checks every setting of cfg without touching the database or
// the network. Open runs it first, so a start that fails on a setting
// creates no database and prints no key; agentd doctor runs the same
// check. All problems are reported at once, one per line.
func (cfg Config) Validate() error {
	var problems []error
	add := func(err error) {
		if err != nil {
			problems = append(problems, err)
		}
	}
	add(checkListenAddr("--addr", cfg.Addr))
	if cfg.MetricsAddr != "" {
		add(checkListenAddr("--metrics-addr", cfg.MetricsAddr))
		if _, port, _ := net.SplitHostPort(cfg.Addr); cfg.MetricsAddr == cfg.Addr && port != "0" {
			add(errors.New("--metrics-addr must differ from --addr"))
		}
	}
	if cfg.DBPath == "" {
		add(errors.New("--db: empty database path"))
	} else if dir := filepath.Dir(cfg.DBPath); !isDir(dir) {
		add(fmt.Errorf("--db %s: folder %s does not exist", cfg.DBPath, dir))
	}
	if cfg.ShutdownTimeout < 0 {
		add(errors.New("--shutdown-timeout must not be negative"))
	}
	if _, err := newEmbedder(cfg.KB); err != nil {
		add(err)
	}
	add(cfg.Calls.validate())
	return errors.Join(problems...)
}

// validate checks the dialer choice and the chosen dialer's settings the
// way the dialer's constructor will, naming flags and variables.
func (c CallsConfig) validate() error {
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
	case "sip", "livekit":
	default:
		return fmt.Errorf("--dialer %q: use none, sim, sip or livekit", c.Dialer)
	}
	if err := checkTelephony(c.Dialer, c.Telephony); err != nil {
		return err
	}
	var err error
	if c.Dialer == "sip" {
		err = dial.CheckSIPConfig(c.Telephony.SIP)
	} else {
		err = dial.CheckLiveKitConfig(c.Telephony.LiveKit)
	}
	if err != nil {
		return fmt.Errorf("--dialer %s: %w", c.Dialer, err)
	}
	return nil
}

// checkListenAddr checks a host:port to listen on.
func checkListenAddr(flag, addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%s %q: want host:port, e.g. 127.0.0.1:8080", flag, addr)
	}
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// NewEmbedder builds the embedder the knowledge settings select, for
// tools that embed outside a server (agentd doctor).
func NewEmbedder(cfg KBConfig) (embed.Embedder, error) { return newEmbedder(cfg) }
