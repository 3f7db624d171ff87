package cmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// agentd runs the binary in dir without AGENTD_* variables and returns stdout,
// stderr and the exit error.
func agentd(t *testing.T, dir string, args ...string) (string, string, error) {
	t.Helper()
	c := exec.Command(agentdBin, args...)
	c.Dir, c.Env = dir, cleanEnv(t, dir)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	return out.String(), errb.String(), err
}

// cleanEnv is the environment without AGENTD_* settings, so the defaults
// apply as for a new user in dir. On PostgreSQL AGENTD_DB names dir's
// database (dbtest.InDir), which stands in for the default ./agentd.db.
func cleanEnv(t *testing.T, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTD_") {
			env = append(env, kv)
		}
	}
	if dbtest.Postgres() {
		env = append(env, "AGENTD_DB="+dbtest.InDir(t, dir, "agentd.db"))
	}
	return env
}

// served is an agentd serve child process.
type served struct {
	cmd  *exec.Cmd
	url  string
	key  string // "" when none was printed
	logs *testbin.Buffer
	done chan error
	once sync.Once
}

// startServe runs agentd serve in dir on a free port with args and waits
// until it answers; the process is stopped when the test ends.
func startServe(t *testing.T, dir string, args ...string) *served {
	t.Helper()
	addr := freePort(t)
	s := &served{url: "http://" + addr, logs: &testbin.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(agentdBin, append([]string{"serve", "--addr", addr}, args...)...)
	s.cmd.Dir, s.cmd.Env = dir, cleanEnv(t, dir)
	stdout, _ := s.cmd.StdoutPipe()
	s.cmd.Stderr = s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	keyc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "owner API key: "); ok {
				key, _, _ := strings.Cut(rest, " ")
				keyc <- key
			}
		}
	}()
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() { s.stop(t) })
	waitHTTP(t, s.url+"/healthz")
	// The key line, when there is one, is written before the server
	// answers, so it is in the pipe by now.
	select {
	case s.key = <-keyc:
	case <-time.After(500 * time.Millisecond):
	}
	return s
}

func (s *served) stop(t *testing.T) {
	s.once.Do(func() {
		s.cmd.Process.Signal(syscall.SIGTERM) // by PID
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
			t.Errorf("serve did not stop; log:\n%s", s.logs.String())
		}
	})
}

// A first start that fails on a setting prints no key and creates no
// database; fixed, the next start prints the key with its expiry.
func TestFailedFirstStartCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	db := dbtest.InDir(t, dir, "agentd.db")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dialer", "sip"}, "--sip-trunk (env AGENTD_SIP_TRUNK)"},
		{[]string{"--dialer", "sip", "--sip-trunk", "a:b:c"}, "bad trunk address"},
		{[]string{"--dialer", "livekit", "--livekit-url", "ftp://x"}, "--livekit-api-key"},
		{[]string{"--dialer", "carrier-pigeon"}, "--dialer"},
		{[]string{"--embedder", "magic"}, "--embedder"},
		{[]string{"--embedder", "openai", "--openai-dimensions", "0"}, "dimensions"},
		{[]string{"--metrics-addr", "nonsense"}, "--metrics-addr"},
		{[]string{"--addr", busy.Addr().String()}, "listen on"},
		{[]string{"--dialer", "sip", "--embedder", "magic"}, "--embedder"}, // every problem at once
	} {
		args := append([]string{"serve", "--db", db}, tc.args...)
		if tc.args[0] != "--addr" {
			args = append(args, "--addr", freePort(t))
		}
		out, errOut, err := agentd(t, dir, args...)
		if err == nil {
			t.Fatalf("%v: started", tc.args)
		}
		if out != "" || strings.Contains(errOut, "agd_") {
			t.Fatalf("%v: printed %q / %q", tc.args, out, errOut)
		}
		if !strings.HasPrefix(errOut, "agentd: ") || !strings.Contains(errOut, tc.want) {
			t.Fatalf("%v: stderr %q, want %q", tc.args, errOut, tc.want)
		}
		if dbtest.Exists(t, db) {
			t.Fatalf("%v: the database exists after a failed start", tc.args)
		}
	}
	s := startServe(t, dir, "--db", db, "--dialer", "sim")
	if s.key == "" {
		t.Fatal("the corrected first start printed no key")
	}
}

// A start on a database whose only admin key was revoked says how to make
// a new one, on stderr, and prints no key.
func TestStartWithoutUsableKeyHints(t *testing.T) {
	dir := t.TempDir()
	db := dbtest.InDir(t, dir, "agentd.db")
	s := startServe(t, dir, "--db", db)
	s.stop(t)
	out, _, err := agentd(t, dir, "--db", db, "key", "list", "--json")
	var keys []struct{ ID string }
	if err != nil || json.Unmarshal([]byte(out), &keys) != nil || len(keys) != 1 {
		t.Fatalf("key list: %v %q", err, out)
	}
	if _, e, err := agentd(t, dir, "--db", db, "key", "revoke", keys[0].ID); err != nil {
		t.Fatalf("revoke: %v %s", err, e)
	}
	s = startServe(t, dir, "--db", db)
	if s.key != "" {
		t.Fatal("a second start printed a key")
	}
	if !strings.Contains(s.logs.String(), "agentd key create --org default") {
		t.Fatalf("no hint on stderr:\n%s", s.logs.String())
	}
}

// The README's quick start places a simulated call in three commands, run
// here as written: the test binary for ./agentd (built as "go build -o
// agentd ." builds it), a free port for 8080, the printed key for agd_...
func TestQuickStartAsWritten(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		"go build -o agentd . && ./agentd serve --dialer sim",
		"AGENT=$(./agentd agent create --name demo --type voice --phone +14155550001 | cut -d' ' -f2)",
		`curl -s localhost:8080/api/v1/calls/outbound -H "x-api-key: agd_..." -H 'Content-Type: application/json' -d "{\"agentId\":\"$AGENT\",\"phoneNumber\":\"+14155550100\"}"`,
	}
	for _, l := range lines {
		if !strings.Contains(string(readme), l) {
			t.Fatalf("README quick start lacks %q", l)
		}
	}
	dir := t.TempDir()
	s := startServe(t, dir, strings.Fields(lines[0])[8:]...) // after "./agentd serve"
	if s.key == "" {
		t.Fatal("no key printed")
	}
	script := strings.NewReplacer("./agentd", agentdBin, "localhost:8080", strings.TrimPrefix(s.url, "http://"),
		"agd_...", s.key).Replace(lines[1] + "\n" + lines[2])
	sh := exec.Command("sh", "-c", script)
	sh.Dir, sh.Env = dir, cleanEnv(t, dir)
	var errb bytes.Buffer
	sh.Stderr = &errb
	body, err := sh.Output()
	var call struct {
		Data struct{ ID, Status string }
	}
	if err != nil || json.Unmarshal(body, &call) != nil || call.Data.Status != "queued" {
		t.Fatalf("commands 2 and 3: %v %s %s", err, body, errb.String())
	}
	var out string
	if !testkit.WithinEvery(20*time.Second, 100*time.Millisecond, func() bool { // a CLI run a look
		out, _, _ = agentd(t, dir, "calls", "get", call.Data.ID, "--json")
		return strings.Contains(out, `"status": "completed"`)
	}) {
		t.Fatalf("the simulated call did not complete: %s", out)
	}
}

// A backup taken by the CLI while the server takes writes restores to a
// database that passes integrity_check and holds every write acknowledged
// before the backup began; restore refuses the live database.
func TestBackupUnderLoadAndRestore(t *testing.T) {
	dbtest.SkipOnPostgres(t, "backup and restore copy the SQLite file (PostgreSQL: pg_dump)")
	dir := t.TempDir()
	db := dbtest.InDir(t, dir, "agentd.db")
	s := startServe(t, dir, "--db", db)
	var mu sync.Mutex
	var acked []string
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				req, _ := http.NewRequestWithContext(ctx, "POST", s.url+"/api/v1/agents",
					strings.NewReader(`{"name":"load-`+strconv.Itoa(w)+`-`+strconv.Itoa(i)+`","type":"chat"}`))
				req.Header.Set("x-api-key", s.key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				var out struct{ Data struct{ ID string } }
				json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if resp.StatusCode == 201 {
					mu.Lock()
					acked = append(acked, out.Data.ID)
					mu.Unlock()
				}
			}
		}()
	}
	acks := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), acked...)
	}
	testkit.Eventually(t, time.Minute, func() bool { return len(acks()) >= 100 }, "100 writes acknowledged")
	before := acks()
	bak := filepath.Join(dir, "backup.db")
	out, errOut, err := agentd(t, dir, "--db", db, "backup", bak)
	if err != nil || !strings.Contains(out, "integrity ok") {
		t.Fatalf("backup: %v %q %q", err, out, errOut)
	}
	testkit.Eventually(t, time.Minute, func() bool { return len(acks()) >= len(before)+50 }, // the load went on through the backup
		"50 more writes acknowledged after the backup")
	cancel()
	wg.Wait()

	_, errOut, err = agentd(t, dir, "--db", db, "restore", bak)
	if err == nil || !strings.Contains(errOut, "open in another process") {
		t.Fatalf("restore over the live database: %v %q", err, errOut)
	}
	restored := filepath.Join(dir, "restored.db")
	if out, errOut, err := agentd(t, dir, "--db", restored, "restore", bak); err != nil || !strings.Contains(out, "integrity ok") {
		t.Fatalf("restore: %v %q %q", err, out, errOut)
	}
	conn, err := sql.Open("sqlite", restored)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var check string
	if err := conn.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	have := map[string]bool{}
	rows, err := conn.Query("SELECT id FROM agents")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		have[id] = true
	}
	rows.Close()
	for _, id := range before {
		if !have[id] {
			t.Fatalf("agent %s, acknowledged before the backup began, is not in the restore (%d of %d)", id, len(have), len(before))
		}
	}
	// The restored database serves.
	s.stop(t)
	s2 := startServe(t, dir, "--db", restored)
	if s2.key != "" {
		t.Fatal("a restored database was bootstrapped again")
	}
}

// fakeLiveKit answers ListRooms and ListSIPOutboundTrunk for tokens signed
// with secret, and 401 unauthenticated otherwise (a minimal Twirp stand-in).
func fakeLiveKit(t *testing.T, secret string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		i := strings.LastIndexByte(tok, '.')
		mac := hmac.New(sha256.New, []byte(secret))
		if i > 0 {
			mac.Write([]byte(tok[:i]))
		}
		if i < 0 || base64.RawURLEncoding.EncodeToString(mac.Sum(nil)) != tok[i+1:] {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"code":"unauthenticated","msg":"invalid token"}`)
			return
		}
		switch r.URL.Path {
		case "/twirp/livekit.RoomService/ListRooms":
			io.WriteString(w, `{"rooms":[]}`)
		case "/twirp/livekit.SIP/ListSIPOutboundTrunk":
			io.WriteString(w, `{"items":[{"sip_trunk_id":"ST_doctor"}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// doctor prints a table (or JSON) and fails on a dead trunk and on a
// wrong LiveKit secret; a healthy setup passes.
func TestDoctor(t *testing.T) {
	dir := t.TempDir()
	db := dbtest.InDir(t, dir, "agentd.db")
	s := startServe(t, dir, "--db", db)
	s.stop(t)

	report := func(wantFail bool, args ...string) map[string]string {
		t.Helper()
		out, errOut, err := agentd(t, dir, append([]string{"--db", db, "doctor", "--json"}, args...)...)
		if (err != nil) != wantFail {
			t.Fatalf("doctor %v: err %v, want failure %v\n%s%s", args, err, wantFail, out, errOut)
		}
		var rep struct {
			OK     bool
			Checks []struct{ Check, Status, Detail string }
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.OK == wantFail {
			t.Fatalf("doctor %v: %v %s", args, err, out)
		}
		m := map[string]string{}
		for _, c := range rep.Checks {
			m[c.Check] = c.Status + ": " + c.Detail
		}
		return m
	}
	m := report(false, "--dialer", "sim")
	ok := []string{"config", "embedder", "clock"}
	files := []string{"database", "integrity", "disk"} // checks of the SQLite file
	if !dbtest.Postgres() {
		ok, files = append(ok, files...), nil
	}
	for _, c := range ok {
		if !strings.HasPrefix(m[c], "ok: ") {
			t.Errorf("%s: %s", c, m[c])
		}
	}
	for _, c := range files {
		if !strings.HasPrefix(m[c], "skip: PostgreSQL") {
			t.Errorf("%s on PostgreSQL: %s", c, m[c])
		}
	}

	deadTrunk := freePort(t) // nothing listens there, on UDP either
	m = report(true, "--dialer", "sip", "--sip-trunk", deadTrunk, "--sip-response-timeout", "500ms")
	if !strings.HasPrefix(m["dialer"], "fail: ") || !strings.Contains(m["dialer"], "OPTIONS") {
		t.Fatalf("dead trunk: %s", m["dialer"])
	}

	lk := fakeLiveKit(t, "the-right-secret")
	lkArgs := []string{"--dialer", "livekit", "--livekit-url", lk, "--livekit-api-key", "APIkey",
		"--livekit-trunk-id", "ST_doctor", "--livekit-agent-name", "agent"}
	m = report(true, append(lkArgs, "--livekit-api-secret", "a-wrong-secret")...)
	if !strings.HasPrefix(m["dialer"], "fail: ") || !strings.Contains(m["dialer"], "--livekit-api-secret") {
		t.Fatalf("wrong secret: %s", m["dialer"])
	}
	m = report(false, append(lkArgs, "--livekit-api-secret", "the-right-secret")...)
	if !strings.HasPrefix(m["dialer"], "ok: ") || !strings.Contains(m["clock"], "LiveKit server") {
		t.Fatalf("right secret: dialer %s, clock %s", m["dialer"], m["clock"])
	}

	// The table, and a configuration error, which fails the config check.
	out, errOut, err := agentd(t, dir, "--db", db, "doctor", "--dialer", "sip")
	if err == nil || !strings.HasPrefix(out, "CHECK") || !strings.Contains(out, "--sip-trunk") ||
		!strings.Contains(errOut, "checks failed") {
		t.Fatalf("doctor table: %v\n%s%s", err, out, errOut)
	}
}
