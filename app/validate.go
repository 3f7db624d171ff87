package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/storage/sqldb"
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
	} else if dir := filepath.Dir(cfg.DBPath); !sqldb.IsPostgresURL(cfg.DBPath) && !isDir(dir) {
		add(fmt.Errorf("--db %s: folder %s does not exist", cfg.DBPath, dir))
	}
	if cfg.ShutdownTimeout < 0 {
		add(errors.New("--shutdown-timeout must not be negative"))
	}
	if _, err := llm.New(cfg.LLM); err != nil {
		add(err)
	}
	if _, err := speech.NewSTT(cfg.STT); err != nil {
		add(err)
	}
	if _, err := speech.NewTTS(cfg.TTS); err != nil {
		add(err)
	}
	if _, err := kb.NewEmbedder(cfg.KB); err != nil {
		add(err)
	}
	if cfg.Recordings.Retention < 0 {
		add(errors.New("--recording-retention must not be negative"))
	}
	add(cfg.Calls.Validate())
	return errors.Join(problems...)
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
