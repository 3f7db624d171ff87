package cmd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app"
	"github.com/agentd/agentd/cmd/cliflags"
)

func newServe(g *globals) *cobra.Command {
	return withServeFlags(g, &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API, the knowledge worker and the dial queue",
	}, func(c *cobra.Command, cfg app.Config) error {
		a, err := app.Open(c.Context(), cfg)
		if err != nil {
			return err
		}
		runErr := a.Run(c.Context())
		return joinErr(runErr, a.Close())
	})
}

// withServeFlags gives c every flag of serve and runs run with the config
// they make: serve and doctor read one configuration the same way.
func withServeFlags(g *globals, c *cobra.Command, run func(*cobra.Command, app.Config) error) *cobra.Command {
	var cfg app.Config
	var logFormat, logLevel string
	c.Args = cobra.NoArgs
	c.RunE = func(c *cobra.Command, _ []string) error {
		log, err := newLogger(logFormat, logLevel)
		if err != nil {
			return err
		}
		cfg.DBPath, cfg.Log, cfg.Out = g.db, log, c.OutOrStdout()
		cfg.Version, _ = buildVersion()
		return run(c, cfg)
	}
	f := c.Flags()
	f.StringVar(&cfg.Addr, "addr", cliflags.String("AGENTD_ADDR", "127.0.0.1:8080"), "listen address (env AGENTD_ADDR)")
	f.Var(cliflags.OneOf(&logFormat, cliflags.String("AGENTD_LOG_FORMAT", "text"), "text", "json"), "log-format", "log format: text or json (env AGENTD_LOG_FORMAT)")
	f.Var(cliflags.NewChoice(&logLevel, cliflags.String("AGENTD_LOG_LEVEL", "info"), checkLevel), "log-level", "log level: debug, info, warn, error (env AGENTD_LOG_LEVEL)")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cliflags.Duration("AGENTD_SHUTDOWN_TIMEOUT", 10*time.Second), "graceful shutdown budget (env AGENTD_SHUTDOWN_TIMEOUT)")
	f.StringVar(&cfg.PublicURL, "public-url", cliflags.String("AGENTD_PUBLIC_URL", ""), "how browsers reach agentd, e.g. https://agentd.example.com: the setup link uses it, and https makes the session cookie Secure (env AGENTD_PUBLIC_URL)")
	f.StringVar(&cfg.InternalKey, "internal-key", cliflags.String("AGENTD_INTERNAL_KEY", ""), "service-to-service key accepted in x-api-key by POST /api/v1/calls/schedule (env AGENTD_INTERNAL_KEY)")
	f.StringVar(&cfg.MetricsAddr, "metrics-addr", cliflags.String("AGENTD_METRICS_ADDR", ""), "serve Prometheus metrics at http://ADDR/metrics, e.g. 127.0.0.1:9090; off when empty (env AGENTD_METRICS_ADDR)")
	f.BoolVar(&cfg.EnforceV1Roles, "v1-enforce-roles", cliflags.Bool("AGENTD_V1_ENFORCE_ROLES", false), "apply the key's role capabilities on /v1 too, for every organization (each may also set enforceV1Roles); off by default, as the /v1 contract checks only the key (env AGENTD_V1_ENFORCE_ROLES)")
	addKBFlags(c, &cfg.KB)
	addCallFlags(c, &cfg.Calls)
	addWebhookFlags(c, &cfg.Webhooks)
	addLLMFlags(c, &cfg.LLM)
	addSpeechFlags(c, &cfg.STT, &cfg.TTS)
	addRecordingFlags(c, &cfg.Recordings)
	return c
}

// checkLevel accepts what slog does: debug, info, warn, error, any case.
func checkLevel(v string) error {
	var lv slog.Level
	if lv.UnmarshalText([]byte(v)) != nil {
		return errors.New("use debug, info, warn or error")
	}
	return nil
}

// newLogger builds the slog logger on stderr (stdout carries the owner key).
func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

func joinErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
