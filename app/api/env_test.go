package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
	"github.com/agentd/agentd/storage"
)

// testEnv is a real agentd (real SQLite file in a temp dir, real HTTP
// server on a loopback port) for end-to-end tests. Shared by every feature's
// tests: create orgs and keys through it, talk HTTP to env.url.
type testEnv struct {
	t         testing.TB
	app       *App
	url       string
	db        *storage.Stores
	key       string // owner key of the bootstrap organization "default"
	orgID     string
	logs      *testbin.Buffer // the server log, e.g. to check keys are never logged
	client    *http.Client
	setupLink string // printed at the first start
}

// newTestEnv starts agentd on a fresh database; opts adjust the config.
func newTestEnv(t testing.TB, opts ...func(*Config)) *testEnv {
	t.Helper()
	return startTestEnv(t, dbtest.Path(t, "agentd.db"), opts...)
}

// startTestEnv starts agentd on the given database file (a restart test
// passes the same path twice).
func startTestEnv(t testing.TB, dbPath string, opts ...func(*Config)) *testEnv {
	t.Helper()
	logs := &testbin.Buffer{}
	var out bytes.Buffer
	cfg := Config{DBPath: dbPath, Addr: "127.0.0.1:0", Version: "test",
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Out: &out}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("open: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	e := &testEnv{t: t, app: a, url: "http://" + a.Addr(), db: a.Features().Stores, logs: logs,
		client: &http.Client{Transport: schemaChecker{srv: a.srv, next: http.DefaultTransport}}}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, ok := strings.CutPrefix(line, "owner API key: "); ok {
			e.key, _, _ = strings.Cut(k, " ")
		}
		if l, ok := strings.CutPrefix(line, "setup link: "); ok {
			e.setupLink = l
		}
	}
	if o, err := a.Features().Stores.Orgs.FindOrg(ctx, "default"); err == nil {
		e.orgID = o.ID
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		a.Close()
	})
	return e
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
