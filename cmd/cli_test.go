package cmd

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// agentdBin is the real binary, built once for the tests that run it as a
// child process.
var agentdBin string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, &agentdBin)) }

// run runs agentd with args in dir and returns stdout; it fails the test
// on a non-zero exit unless wantErr.
func run(t *testing.T, dir string, wantErr bool, args ...string) string {
	t.Helper()
	out, errOut, err := testbin.Run(agentdBin, dir, []string{"AGENTD_DB=" + dbtest.InDir(t, dir, "agentd.db")}, args...)
	if (err != nil) != wantErr {
		t.Fatalf("agentd %v: err %v\nstdout %s\nstderr %s", args, err, out, errOut)
	}
	if wantErr && !strings.HasPrefix(errOut, "agentd: ") {
		t.Fatalf("agentd %v: error not printed once as 'agentd: ...': %q", args, errOut)
	}
	return out
}

// freePort is testbin.FreeAddr (other tests of this package use the name).
func freePort(t *testing.T) string { return testbin.FreeAddr(t) }

// waitHTTP is testbin.WaitHTTP with a 10 s limit.
func waitHTTP(t *testing.T, url string) { testbin.WaitHTTP(t, url, 10*time.Second) }

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
	// An empty AGENTD_DB loses to --db.
	srv := testbin.Serve(t, testbin.Proc{Bin: agentdBin, Dir: dir, Env: []string{"AGENTD_DB="},
		Args: []string{"--log-format", "json", "--db", dbtest.InDir(t, dir, "agentd.db")}})
	key := srv.Key
	out := srv.Stdout()
	if len(out) != 2 || !strings.HasPrefix(out[0], testbin.KeyPrefix) || len(key) != 44 ||
		!strings.HasPrefix(out[1], "setup link: "+srv.URL+"/setup?token=") {
		t.Fatalf("stdout %q, want the key line and the setup link", out)
	}
	// The key line says when the key expires and how to make another.
	_, rest, _ := strings.Cut(out[0], key+" (expires ")
	exp, rest, _ := strings.Cut(rest, ";")
	if d, err := time.Parse("2006-01-02", exp); err != nil || time.Until(d) < 29*24*time.Hour ||
		!strings.Contains(rest, "agentd key create") {
		t.Fatalf("key line %q: want the expiry and how to make another key", out[0])
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/v2/api-keys", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET api-keys: %v %v", resp, err)
	}
	resp.Body.Close()

	// The CLI works on the same file while the server runs.
	run(t, dir, false, "--db", dbtest.InDir(t, dir, "agentd.db"), "user", "add", "v@example.test", "--role", "viewer")

	if err := srv.Stop(10 * time.Second); err != nil {
		t.Fatalf("serve did not stop cleanly within 10 s of SIGTERM: %v; log:\n%s", err, srv.Logs.String())
	}
	if out := srv.Stdout(); len(out) != 2 {
		t.Fatalf("stdout printed more than the key and the setup link: %q", out)
	}
	logs := srv.Logs.String()
	if strings.Contains(logs, key) {
		t.Fatal("the key appears in the log")
	}
	if !strings.Contains(logs, `"msg":"request"`) || !strings.Contains(logs, `"key":"agd_`) {
		t.Fatalf("no JSON request log line with key prefix:\n%s", logs)
	}
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

// user password reads the password from standard input and sets it; a short
// one is refused and nothing changes.
func TestUserPasswordFromStdin(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, false, "org", "create", "acme", "--owner", "o@acme.test")
	for _, tc := range []struct {
		in      string
		wantErr bool
	}{{"short\n", true}, {"", true}, {"a long enough password\n", false}} {
		c := exec.Command(agentdBin, "user", "password", "o@acme.test")
		c.Dir = dir
		c.Env = append(os.Environ(), "AGENTD_DB="+dbtest.InDir(t, dir, "agentd.db"))
		c.Stdin = strings.NewReader(tc.in)
		out, err := c.CombinedOutput()
		if (err != nil) != tc.wantErr {
			t.Fatalf("stdin %q: err %v: %s", tc.in, err, out)
		}
		if strings.Contains(string(out), "long enough") {
			t.Fatal("the password was echoed")
		}
	}
}
