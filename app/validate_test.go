package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/dial"
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
		{Config{Calls: CallsConfig{Dialer: "sip"}}, []string{"--sip-trunk (env AGENTD_SIP_TRUNK)"}},
		{Config{Calls: CallsConfig{Dialer: "sip", Telephony: TelephonyConfig{SIP: dial.SIPConfig{Trunk: "t:5060", Transport: "sctp"}}}}, []string{"transport"}},
		{Config{Calls: CallsConfig{Dialer: "livekit", Telephony: TelephonyConfig{LiveKit: dial.LiveKitConfig{URL: "gopher://x",
			APIKey: "k", APISecret: "s", OutboundTrunkID: "ST_x", AgentName: "a"}}}}, []string{"scheme"}},
		{Config{Addr: "nope", KB: KBConfig{Embedder: "magic"}, Calls: CallsConfig{Dialer: "fax"}}, []string{"--addr", "--embedder", "--dialer"}},
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
