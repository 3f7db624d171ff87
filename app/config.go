package app

import (
	"io"
	"log/slog"
	"time"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/api"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/app/widget"
	"github.com/agentd/agentd/internal/metrics"
)

// Config is everything agentd serve needs; cmd fills it from flags and
// AGENTD_* environment variables (flag beats env beats default).
type Config struct {
	DBPath          string
	Addr            string // e.g. 127.0.0.1:8080; ":0" picks a free port
	Version         string
	Log             *slog.Logger
	Out             io.Writer     // where the first-run owner key is printed
	ShutdownTimeout time.Duration // graceful stop budget; default 10 s
	InternalKey     string        // service-to-service key for POST /api/v1/calls/schedule
	PublicURL       string        // how browsers reach the server (setup link, Secure cookies when https)
	MetricsAddr     string        // where /metrics is served; "" is off (app/metrics.go)
	// ReadTimeout bounds reading a request, headers and body (default 30 s;
	// routes taking bodies over 1 MiB get longer, see bodyDeadline), so a
	// client dribbling a byte every few seconds cannot hold a connection.
	ReadTimeout time.Duration
	// EnforceV1Roles applies the key's role capabilities on /v1 for every
	// organization (--v1-enforce-roles); each organization may also turn it
	// on in its settings (enforceV1Roles).
	EnforceV1Roles bool

	KB       kb.Config
	Calls    calls.Config
	Webhooks events.Config
	LLM      llm.Config    // the model conversations answer with (app/llm)
	Widget   widget.Config // the chat widget's limits (app/widget)
	// STT and TTS are the speech services voice calls listen and speak
	// with (app/voice/speech); off (none) by default.
	STT, TTS speech.Config
	// Recordings is where voice calls' audio is kept and for how long
	// (app/recordings); Dir "" is beside the SQLite database.
	Recordings recordings.Config
	// AnalysisPoll is how often the analysis worker looks at its queue
	// when idle (0: 500 ms); tests shorten it.
	AnalysisPoll time.Duration
	// AnalysisRetry is the first wait before asking a model that was down
	// again, doubling each time (0: 2 s); tests shorten it.
	AnalysisRetry time.Duration
}

// features is the feature set's part of cfg (workers on: this is serve),
// with the metrics registry (nil when off).
func (cfg Config) features(reg *metrics.Registry) features.Config {
	fc := features.Config{DBPath: cfg.DBPath, Workers: true, Metrics: reg, Calls: cfg.Calls, KB: cfg.KB,
		Webhooks: cfg.Webhooks, LLM: cfg.LLM, Widget: cfg.Widget, Log: cfg.Log,
		STT: cfg.STT, TTS: cfg.TTS, Recordings: cfg.Recordings,
		Analysis: analysis.Config{Poll: cfg.AnalysisPoll, RetryBase: cfg.AnalysisRetry}}
	if reg != nil {
		fc.VoiceMetrics = reg.Voice()
	}
	if fc.Recordings.Dir == "" {
		fc.Recordings.Dir = recordings.DefaultDir(cfg.DBPath)
	}
	return fc
}

// api is the HTTP API's part of cfg.
func (cfg Config) api(reg *metrics.Registry) api.Config {
	return api.Config{Version: cfg.Version, InternalKey: cfg.InternalKey, PublicURL: cfg.PublicURL,
		ReadTimeout: cfg.ReadTimeout, EnforceV1Roles: cfg.EnforceV1Roles, Webhooks: cfg.Webhooks, Metrics: reg, Log: cfg.Log}
}
