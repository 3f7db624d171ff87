package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testbin"
)

// agentdBin is the real binary, built once for the tests that run it as a
// child process.
var agentdBin string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, &agentdBin)) }

// run runs agentd with args in dir and returns stdout; it fails the test
// on a non-zero exit unless wantErr.
func run(t *testing.T, dir string, wantErr bool, args ...string) string {
	t.Helper()
	c := exec.Command(agentdBin, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "AGENTD_DB="+filepath.Join(dir, "agentd.db"))
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if (err != nil) != wantErr {
		t.Fatalf("agentd %v: err %v\nstdout %s\nstderr %s", args, err, out.String(), errb.String())
	}
	if wantErr && !strings.HasPrefix(errb.String(), "agentd: ") {
		t.Fatalf("agentd %v: error not printed once as 'agentd: ...': %q", args, errb.String())
	}
	return out.String()
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestVersion(t *testing.T) {
	out := run(t, t.TempDir(), false, "version")
	if !strings.HasPrefix(out, "agentd ") || !strings.Contains(out, "commit") {
		t.Fatalf("version: %q", out)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(run(t, t.TempDir(), false, "version", "--json")), &v); err != nil || v["version"] == "" {
		t.Fatalf("version --json: %v %v", v, err)
	}
}

// A fresh serve on an empty directory prints the owner key once, answers
// with it, and stops within the shutdown budget on SIGTERM.
func TestServeFirstRunAndGracefulStop(t *testing.T) {
	dir := t.TempDir()
	addr := freePort(t)
	srv := exec.Command(agentdBin, "serve", "--addr", addr, "--log-format", "json")
	srv.Dir = dir
	srv.Env = append(os.Environ(), "AGENTD_DB=")
	srv.Args = append(srv.Args, "--db", filepath.Join(dir, "agentd.db"))
	stdout, _ := srv.StdoutPipe()
	var logs bytes.Buffer
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var key string
	select {
	case l := <-lines:
		// "owner API key: agd_... (expires YYYY-MM-DD; make another with: agentd key create)"
		rest, ok := strings.CutPrefix(l, "owner API key: ")
		key, rest, _ = strings.Cut(rest, " ")
		exp, _, _ := strings.Cut(strings.TrimPrefix(rest, "(expires "), ";")
		if d, err := time.Parse("2006-01-02", exp); !ok || len(key) != 44 || err != nil ||
			d.Sub(time.Now()) < 29*24*time.Hour || !strings.Contains(rest, "agentd key create") {
			t.Fatalf("first stdout line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no key printed")
	}
	waitHTTP(t, "http://"+addr+"/healthz")
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v2/api-keys", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET api-keys: %v %v", resp, err)
	}
	resp.Body.Close()

	// The CLI works on the same file while the server runs.
	run(t, dir, false, "--db", filepath.Join(dir, "agentd.db"), "user", "add", "v@example.test", "--role", "viewer")

	start := time.Now()
	srv.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v; log:\n%s", err, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of SIGTERM")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("slow shutdown")
	}
	if more, ok := <-lines; ok {
		t.Fatalf("stdout printed more than the key: %q", more)
	}
	if strings.Contains(logs.String(), key) {
		t.Fatal("the key appears in the log")
	}
	if !strings.Contains(logs.String(), `"msg":"request"`) || !strings.Contains(logs.String(), `"key":"agd_`) {
		t.Fatalf("no JSON request log line with key prefix:\n%s", logs.String())
	}
}

func waitHTTP(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never answered", url)
}

func TestOrgUserKeyCommands(t *testing.T) {
	dir := t.TempDir()
	var org map[string]any
	json.Unmarshal([]byte(run(t, dir, false, "org", "create", "acme", "--owner", "boss@acme.test", "--json")), &org)
	if org["name"] != "acme" || !strings.HasPrefix(org["key"].(string), "agd_") {
		t.Fatalf("org create: %v", org)
	}
	run(t, dir, true, "org", "create", "acme") // taken name
	run(t, dir, false, "org", "create", "beta")
	// Two organizations: --org is needed now.
	run(t, dir, true, "user", "list")
	run(t, dir, false, "user", "add", "dev@acme.test", "--org", "acme", "--role", "member")
	run(t, dir, true, "user", "add", "x@acme.test", "--org", "acme", "--role", "king")
	run(t, dir, true, "user", "add", "not-an-email", "--org", "acme")
	var users []map[string]any
	json.Unmarshal([]byte(run(t, dir, false, "user", "list", "--org", "acme", "--json")), &users)
	if len(users) != 2 {
		t.Fatalf("users: %v", users)
	}
	var key map[string]any
	json.Unmarshal([]byte(run(t, dir, false, "key", "create", "--org", "acme", "--user", "dev@acme.test",
		"--name", "ci", "--expires-in-days", "7", "--rate-limit", "60", "--json")), &key)
	if key["role"] != "member" || key["rateLimitPerMinute"] != float64(60) {
		t.Fatalf("key create: %v", key)
	}
	var never map[string]any
	json.Unmarshal([]byte(run(t, dir, false, "key", "create", "--org", org["id"].(string), "--never-expires", "--json")), &never)
	if never["expiresAt"] != nil || never["user"] != "boss@acme.test" {
		t.Fatalf("never-expiring owner key: %v", never)
	}
	var keys []map[string]any
	json.Unmarshal([]byte(run(t, dir, false, "key", "list", "--org", "acme", "--json")), &keys)
	if len(keys) != 3 {
		t.Fatalf("keys: %v", keys)
	}
	for _, k := range keys {
		if _, leaked := k["key"]; leaked {
			t.Fatal("key list shows a secret")
		}
	}
	run(t, dir, false, "key", "revoke", key["id"].(string))
	run(t, dir, true, "key", "revoke", "no-such-key")
	run(t, dir, false, "user", "remove", "dev@acme.test", "--org", "acme")
	run(t, dir, true, "user", "remove", "dev@acme.test", "--org", "acme")
	json.Unmarshal([]byte(run(t, dir, false, "key", "list", "--org", "acme", "--json")), &keys)
	if len(keys) != 2 {
		t.Fatalf("keys after removing their user: %d", len(keys))
	}
}
