package doctor

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/storage"
)

func byCheck(r Report) map[string]Result {
	m := map[string]Result{}
	for _, c := range r.Checks {
		m[c.Check] = c
	}
	return m
}

func newDB(t *testing.T) string {
	t.Helper()
	path := dbtest.Path(t, "agentd.db")
	db, err := storage.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Orgs.CreateOrg(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return path
}

func TestHealthyInstall(t *testing.T) {
	emb, err := embed.NewBuiltin(128)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t), Dialer: "sim", Embedder: emb})
	if !r.OK || r.Failed() != 0 || len(r.Checks) != 12 {
		t.Fatalf("%+v", r)
	}
	m := byCheck(r)
	ok := []string{"config", "embedder", "model", "clock"}
	files := []string{"database", "integrity", "disk"}
	if !dbtest.Postgres() {
		ok, files = append(ok, files...), nil
	}
	for _, c := range ok {
		if m[c].Status != OK {
			t.Errorf("%s: %+v", c, m[c])
		}
	}
	// On PostgreSQL the SQLite file checks are skipped, saying why, and
	// never echo the URL (it may hold a password).
	for _, c := range files {
		if m[c].Status != Skip || !strings.Contains(m[c].Detail, "PostgreSQL") || strings.Contains(m[c].Detail, "postgres://") {
			t.Errorf("%s on PostgreSQL: %+v", c, m[c])
		}
	}
	if m["dialer"].Status != Warn {
		t.Errorf("sim dialer: %+v", m["dialer"])
	}
}

// Nothing is created for a database that does not exist yet.
func TestMissingDatabaseIsAWarning(t *testing.T) {
	dbtest.SkipOnPostgres(t, "a database file that does not exist yet")
	path := filepath.Join(t.TempDir(), "none.db")
	r := Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: path, ConfigErr: errors.New("--dialer sip needs --sip-trunk\n--embedder \"x\"")})
	m := byCheck(r)
	if m["database"].Status != Warn || m["integrity"].Status != Skip || r.OK {
		t.Fatalf("%+v", r)
	}
	if m["config"].Status != Fail || strings.Contains(m["config"].Detail, "\n") {
		t.Fatalf("config: %+v", m["config"])
	}
	if _, err := storage.InspectFile(t.Context(), path); err == nil {
		t.Fatal("the doctor created the database")
	}
}

// A clock behind the newest stored time, or not set at all, fails.
func TestClock(t *testing.T) {
	path := newDB(t)
	past := func() time.Time { return time.Now().Add(-time.Hour) }
	// The newest stored time is read from the SQLite file (see database).
	if c := byCheck(Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: path, Now: past}))["clock"]; !dbtest.Postgres() &&
		(c.Status != Fail || !strings.Contains(c.Detail, "ahead of this clock")) {
		t.Fatalf("clock set back: %+v", c)
	}
	unset := func() time.Time { return time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC) }
	if c := byCheck(Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: path, Now: unset}))["clock"]; c.Status != Fail {
		t.Fatalf("clock unset: %+v", c)
	}
	r := &run{now: time.Now, serverTime: time.Now().Add(-time.Minute)}
	if st, d := r.clock(t.Context()); st != Fail || !strings.Contains(d, "LiveKit") {
		t.Fatalf("skew: %s %s", st, d)
	}
}

// A broken embedder fails its check with the reason.
func TestEmbedderFailure(t *testing.T) {
	r := Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t), EmbedderErr: errors.New("--embedder openai: model is required")})
	if c := byCheck(r)["embedder"]; c.Status != Fail || !strings.Contains(c.Detail, "model is required") || r.OK {
		t.Fatalf("%+v", c)
	}
}

// The model check asks the configured model for one short answer: a model
// that answers passes, one that is down fails naming the service.
func TestModelCheck(t *testing.T) {
	s := llmtest.New(t)
	m, err := llm.New(llm.Config{Kind: "openai", URL: s.URL, Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	s.Push(llmtest.Reply{Content: "OK"})
	r := Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t), Model: m})
	if c := byCheck(r)["model"]; c.Status != OK || !strings.Contains(c.Detail, `answered "OK"`) || s.Requests.Load() != 1 {
		t.Fatalf("%+v", c)
	}
	s.Push(llmtest.Reply{Status: 503})
	r = Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t), Model: m})
	if c := byCheck(r)["model"]; c.Status != Fail || !strings.Contains(c.Detail, "openai at 127.0.0.1") || r.OK {
		t.Fatalf("%+v", c)
	}
}

// An MCP server that does not answer is a warning naming the agent and
// the server, never a failure.
func TestMCPCheck(t *testing.T) {
	path := newDB(t)
	for _, c := range []struct {
		ok     int
		failed []string
		err    error
		want   Status
		detail string
	}{
		{0, nil, nil, OK, "no agent uses an MCP server"},
		{2, nil, nil, OK, "2 MCP servers"},
		{1, []string{"agent Orders: crm: MCP server unreachable: no answer in time"}, nil, Warn, "agent Orders: crm"},
		{0, nil, errors.New("database is locked"), Warn, "not checked"},
	} {
		r := Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: path, Dialer: "sim",
			MCP: func(context.Context) (int, []string, error) { return c.ok, c.failed, c.err }})
		m := byCheck(r)["mcp"]
		if m.Status != c.want || !strings.Contains(m.Detail, c.detail) {
			t.Errorf("%+v: %+v", c, m)
		}
	}
	if m := byCheck(Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: path}))["mcp"]; m.Status != Skip {
		t.Errorf("without a probe: %+v", m)
	}
}

// The speech checks: none warns that voice agents stay silent; a service
// that answers passes; one that is down fails naming it.
func TestSpeechChecks(t *testing.T) {
	r := Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t)})
	for _, name := range []string{"speech-to-text", "text-to-speech"} {
		if c := byCheck(r)[name]; c.Status != Warn || !strings.Contains(c.Detail, "stay silent") {
			t.Fatalf("%s off: %+v", name, c)
		}
	}
	s := speechtest.New(t)
	cfg := speech.Config{Kind: "openai", URL: s.URL, Timeout: 5 * time.Second}
	stt, err := speech.NewSTT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tts, err := speech.NewTTS(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.PushSpeech(speechtest.Speech{Tone: 440, Duration: 200 * time.Millisecond})
	r = Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t), STT: stt, TTS: tts})
	m := byCheck(r)
	if m["speech-to-text"].Status != OK || m["text-to-speech"].Status != OK || len(s.Heard()) != 1 || s.Spoken()[0].Input != "Hello." {
		t.Fatalf("%+v %+v", m["speech-to-text"], m["text-to-speech"])
	}
	s.PushTranscripts(speechtest.Transcript{Status: 503})
	s.PushSpeech(speechtest.Speech{Status: 503})
	r = Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t), STT: stt, TTS: tts})
	m = byCheck(r)
	if c := m["speech-to-text"]; c.Status != Fail || !strings.Contains(c.Detail, "speech-to-text service unavailable: HTTP 503") || r.OK {
		t.Fatalf("%+v", c)
	}
	if c := m["text-to-speech"]; c.Status != Fail || !strings.Contains(c.Detail, "text-to-speech service unavailable: HTTP 503") {
		t.Fatalf("%+v", c)
	}
}

// A reranker that answers is ok with its scores; one that is down fails
// the check, saying searches keep the hybrid order.
func TestRerankerCheck(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"results":[{"index":1,"relevance_score":0.1},{"index":0,"relevance_score":0.9}]}`)
	}))
	defer up.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	for url, want := range map[string]Status{up.URL: OK, down.URL: Fail} {
		r := Run(t.Context(), Input{Inspect: storage.InspectFile, DBPath: newDB(t), Dialer: "sim",
			Reranker: &embed.HTTPReranker{URL: url, Model: "rr"}})
		if c := byCheck(r)["reranker"]; c.Status != want || (want == OK && !strings.Contains(c.Detail, "0.900")) ||
			(want == Fail && !strings.Contains(c.Detail, "HTTP 503")) {
			t.Errorf("%s: %+v", url, c)
		}
	}
}
