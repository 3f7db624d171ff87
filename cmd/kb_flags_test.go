package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/cmd/cliflags"
)

// --embed-retries 0 (or AGENTD_EMBED_RETRIES=0) makes one attempt: the
// embedder reads a zero as "the default, 5", which made it 6 (issue 26).
func TestEmbedRetriesZeroMeansNone(t *testing.T) {
	var hits atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	for _, c := range []struct {
		args []string
		env  string
		want int32
	}{
		{[]string{"--embed-retries", "0"}, "", 1},
		{nil, "0", 1},
		{[]string{"--embed-retries", "1"}, "", 2},
		{[]string{"--embed-retries=-1"}, "", 1},
	} {
		t.Setenv("AGENTD_EMBED_RETRIES", c.env)
		var cfg kb.Config
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		addKBFlags(cmd, &cfg)
		if err := cmd.ParseFlags(append([]string{"--embedder", "openai", "--openai-base-url", down.URL, "--openai-api-key", "k"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		if c.env != "" {
			if err := cliflags.ApplyEnv(cmd.Flags()); err != nil {
				t.Fatal(err)
			}
		}
		emb, err := kb.NewEmbedder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hits.Store(0)
		if _, err := emb.Embed(context.Background(), []string{"hello"}); err == nil {
			t.Fatal("embedding against a server that is down succeeded")
		}
		if hits.Load() != c.want {
			t.Errorf("%v env %q: %d attempts, want %d", c.args, c.env, hits.Load(), c.want)
		}
	}
	var cfg kb.Config
	cmd := &cobra.Command{Use: "x"}
	addKBFlags(cmd, &cfg)
	if err := cmd.ParseFlags([]string{"--embed-retries", "five"}); err == nil {
		t.Fatal("--embed-retries five accepted")
	}
}
