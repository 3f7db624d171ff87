package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/dial/livekitdial"
	"github.com/agentd/agentd/dial/sipdial"
)

// Open refuses a bad setting before it creates the database, and names
// every problem at once.
func TestOpenValidatesBeforeTheDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "agentd.db")
	for _, tc := range []struct {
		cfg  Config
		want []string
	}{
		{Config{Calls: calls.Config{Dialer: "sip"}}, []string{"--sip-trunk (env AGENTD_SIP_TRUNK)"}},
		{Config{Calls: calls.Config{Dialer: "sip", Telephony: calls.TelephonyConfig{SIP: sipdial.Config{Trunk: "t:5060", Transport: "sctp"}}}}, []string{"transport"}},
		{Config{Calls: calls.Config{Dialer: "livekit", Telephony: calls.TelephonyConfig{LiveKit: livekitdial.LiveKitConfig{URL: "gopher://x",
			APIKey: "k", APISecret: "s", OutboundTrunkID: "ST_x", AgentName: "a"}}}}, []string{"scheme"}},
		{Config{Addr: "nope", KB: kb.Config{Embedder: "magic"}, Calls: calls.Config{Dialer: "fax"}}, []string{"--addr", "--embedder", "--dialer"}},
		{Config{MetricsAddr: "127.0.0.1:9090", Addr: "127.0.0.1:9090"}, []string{"--metrics-addr must differ"}},
		{Config{DBPath: filepath.Join(dir, "missing", "a.db")}, []string{"does not exist"}},
	} {
		cfg := tc.cfg
		if cfg.DBPath == "" {
			cfg.DBPath = db
		}
		if cfg.Addr == "" {
			cfg.Addr = "127.0.0.1:0"
		}
		_, err := Open(context.Background(), cfg)
		if err == nil {
			t.Fatalf("%+v: opened", tc.cfg)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q lacks %q", tc.cfg, err, w)
			}
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("%+v: database created (%v)", tc.cfg, err)
		}
	}
}
