package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"github.com/agentd/agentd/app/voice/speech"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/app/widget"
	"github.com/agentd/agentd/internal/metrics"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
	"github.com/agentd/agentd/storage"
)

// testEnv is a real agentd (real SQLite file in a temp dir, or the
// PostgreSQL of AGENTD_TEST_POSTGRES, real HTTP server on a loopback port)
// for end-to-end tests. Shared by every feature's tests: create orgs and
// keys through it, talk HTTP to env.url.
type testEnv struct {
	t         testing.TB
	app       *testApp
	url       string
	db        *storage.Stores
	key       string // owner key of the bootstrap organization "default"
	orgID     string
	logs      *testbin.Buffer // the server log, e.g. to check keys are never logged
	client    *http.Client
	setupLink string // printed at the first start
}

// serveConfig is the test server's settings: those of agentd serve (app.Config),
// which package app splits into features.Config and Config as openTestApp
// does here (a test of this package cannot import app: app imports it).
type serveConfig struct {
	DBPath          string
	Version         string
	Log             *slog.Logger
	InternalKey     string
	PublicURL       string
	MetricsAddr     string
	ReadTimeout     time.Duration
	EnforceV1Roles  bool
	ShutdownTimeout time.Duration
	KB              kb.Config
	Calls           calls.Config
	Webhooks        events.Config
	LLM             llm.Config
	Widget          widget.Config
	AnalysisPoll    time.Duration
	AnalysisRetry   time.Duration
	STT, TTS        speech.Config // the voice loop's speech services (off when empty)
}

// testApp is the server under test as agentd serve runs it: the features
// opened once (features.Open), the API built from them (New), the
// features' workers and the HTTP server running until the test ends.
type testApp struct {
	srv       *Server
	f         *features.Set
	ln        net.Listener
	metricsLn net.Listener
}

func (a *testApp) Addr() string            { return a.ln.Addr().String() }
func (a *testApp) Features() *features.Set { return a.f }

// MetricsAddr is the address /metrics is served on ("" when off).
func (a *testApp) MetricsAddr() string {
	if a.metricsLn == nil {
		return ""
	}
	return a.metricsLn.Addr().String()
}

// newTestEnv starts agentd on a fresh database; opts adjust the config.
func newTestEnv(t testing.TB, opts ...func(*serveConfig)) *testEnv {
	t.Helper()
	return startTestEnv(t, dbtest.Path(t, "agentd.db"), opts...)
}

// startTestEnv starts agentd on the given database file (a restart test
// passes the same path twice).
func startTestEnv(t testing.TB, dbPath string, opts ...func(*serveConfig)) *testEnv {
	t.Helper()
	logs := &testbin.Buffer{}
	cfg := serveConfig{DBPath: dbPath, Version: "test",
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, lines := openTestApp(ctx, t, cfg)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.srv.Serve(gctx, a.ln, cmp.Or(cfg.ShutdownTimeout, 10*time.Second)) })
	for _, w := range a.f.Workers() {
		g.Go(func() error { return w(gctx) })
	}
	e := &testEnv{t: t, app: a, url: "http://" + a.Addr(), db: a.f.Stores, logs: logs,
		client: &http.Client{Transport: schemaChecker{srv: a.srv, next: http.DefaultTransport}}}
	for _, line := range lines {
		if k, ok := strings.CutPrefix(line, "owner API key: "); ok {
			e.key, _, _ = strings.Cut(k, " ")
		}
		if l, ok := strings.CutPrefix(line, "setup link: "); ok {
			e.setupLink = l
		}
	}
	if o, err := a.f.Stores.Orgs.FindOrg(ctx, "default"); err == nil {
		e.orgID = o.ID
	}
	t.Cleanup(func() {
		cancel()
		if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
		if a.metricsLn != nil {
			a.metricsLn.Close()
		}
		a.f.Close()
	})
	return e
}

// openTestApp opens the features and builds the server as app.Open does,
// and runs the first start (the owner key lines it prints).
func openTestApp(ctx context.Context, t testing.TB, cfg serveConfig) (*testApp, []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &testApp{ln: ln}
	var reg *metrics.Registry
	if cfg.MetricsAddr != "" {
		reg = metrics.New()
		if a.metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			t.Fatal(err)
		}
		go ServeMetrics(ctx, a.metricsLn, reg, cfg.Log)
	}
	a.f, err = features.Open(ctx, features.Config{DBPath: cfg.DBPath, Workers: true, Metrics: reg, Calls: cfg.Calls, KB: cfg.KB,
		Webhooks: cfg.Webhooks, LLM: cfg.LLM, Widget: cfg.Widget, Log: cfg.Log, Recordings: recordings.Config{Dir: t.TempDir()},
		STT: cfg.STT, TTS: cfg.TTS,
		Analysis: analysis.Config{Poll: cfg.AnalysisPoll, RetryBase: cfg.AnalysisRetry}})
	if err != nil {
		ln.Close()
		t.Fatalf("open: %v", err)
	}
	f := a.f
	a.srv = New(Config{Version: cfg.Version, InternalKey: cfg.InternalKey, PublicURL: cfg.PublicURL,
		ReadTimeout: cfg.ReadTimeout, EnforceV1Roles: cfg.EnforceV1Roles, Webhooks: cfg.Webhooks, Metrics: reg, Log: cfg.Log},
		Deps{Dashboard: f.Dashboard, Access: f.Access, Agents: f.Agents, DNC: f.DNC, Settings: f.Settings, Calls: f.Calls, KB: f.KB,
			Listings: f.Listings, Events: f.Events, Deliveries: f.Deliveries, Conversations: f.Conversations, Widget: f.Widget,
			Analysis: f.Analysis, AgentTests: f.AgentTests, Recordings: f.Recordings, WebCalls: f.WebCalls,
			Stores: Stores{Epoch: f.Stores, Orgs: f.Stores.Orgs, Calls: f.Stores.Calls, Agents: f.Stores.Agents,
				Shared: f.Stores.Postgres()}})
	base := cfg.PublicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	lines, _, err := f.Access.FirstRun(ctx, base, time.Now())
	if err != nil {
		t.Fatalf("first run: %v", err)
	}
	return a, lines
}

// newOrg creates another organization and returns its id and owner key.
func (e *testEnv) newOrg(name string) (string, string) {
	e.t.Helper()
	o, key, _, err := features.NewAccess(e.db).CreateOrg(context.Background(), name, "owner@"+name+".test")
	if err != nil {
		e.t.Fatalf("create org: %v", err)
	}
	return o.ID, key
}

// keyWithRole adds a user with the role to the org and returns a key of theirs.
func (e *testEnv) keyWithRole(orgID, role string, o access.KeyOptions) string {
	e.t.Helper()
	u, err := e.db.Orgs.AddUser(context.Background(), orgID, role+"-"+newRequestID("")+"@example.test", role)
	if err != nil {
		e.t.Fatalf("add user: %v", err)
	}
	key, _, err := features.NewAccess(e.db).CreateKey(context.Background(), orgID, u.ID, o)
	if err != nil {
		e.t.Fatalf("create key: %v", err)
	}
	return key
}

// do sends a request with the key in x-api-key (none when key is "");
// body may be nil, a string/[]byte (sent as is) or a value (sent as JSON).
func (e *testEnv) do(method, path, key string, body any) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("marshal: %v", err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatalf("request: %v", err)
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, resp.Header, b
}

// doJSON is do that decodes the JSON response into out (when not nil) and
// returns the status.
func (e *testEnv) doJSON(method, path, key string, body, out any) int {
	e.t.Helper()
	code, _, b := e.do(method, path, key, body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
	return code
}

// discardLogger drops every log line (benchmarks measure the server, not the terminal).
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
