package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentd/agentd/cmd/cliflags"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// serveWith runs 'agentd serve args...' in process with env set and returns
// what it printed on stderr; every case here fails before the server opens.
func serveWith(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	root := NewRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"serve", "--db", dbtest.Path(t, "agentd.db"), "--addr", "127.0.0.1:0"}, args...))
	if err := Execute(context.Background(), root); err == nil {
		t.Fatalf("serve %v with %v started", args, env)
	}
	if out.Len() != 0 {
		t.Fatalf("stdout: %q", out.String())
	}
	return errOut.String()
}

// A value that does not parse stops serve with one line naming the variable
// and the value, for each kind of value.
func TestEnvValueThatDoesNotParseStopsServe(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"AGENTD_MAX_CONCURRENT_CALLS", "1O", `agentd: AGENTD_MAX_CONCURRENT_CALLS: invalid integer "1O"` + "\n"},
		{"AGENTD_EMBED_DIMS", "99999999999999999999", `agentd: AGENTD_EMBED_DIMS: invalid integer "99999999999999999999"` + "\n"},
		{"AGENTD_DIAL_CPS", "fast", `agentd: AGENTD_DIAL_CPS: invalid number "fast"` + "\n"},
		{"AGENTD_SIM_CALL_SECONDS", "3s", `agentd: AGENTD_SIM_CALL_SECONDS: invalid number "3s"` + "\n"},
		{"AGENTD_OPENAI_SEND_DIMENSIONS", "yes", `agentd: AGENTD_OPENAI_SEND_DIMENSIONS: invalid boolean "yes" (use true or false)` + "\n"},
		{"AGENTD_DIAL_LEASE", "30", `agentd: AGENTD_DIAL_LEASE: invalid duration "30" (use a unit, e.g. 500ms, 30s, 5m)` + "\n"},
		{"AGENTD_SHUTDOWN_TIMEOUT", "", `agentd: AGENTD_SHUTDOWN_TIMEOUT: invalid duration "" (use a unit, e.g. 500ms, 30s, 5m)` + "\n"},
		{"AGENTD_LOG_LEVEL", "verbose", `agentd: AGENTD_LOG_LEVEL: invalid value "verbose": use debug, info, warn or error` + "\n"},
		{"AGENTD_LOG_FORMAT", "xml", `agentd: AGENTD_LOG_FORMAT: invalid value "xml": use text or json` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serveWith(t, map[string]string{tc.name: tc.value}); got != tc.want {
				t.Fatalf("stderr %q, want %q", got, tc.want)
			}
		})
	}
}

// Every bad value is named at once, so one fix-and-retry is enough.
func TestEnvReportsEveryBadValue(t *testing.T) {
	got := serveWith(t, map[string]string{"AGENTD_MAX_CONCURRENT_CALLS": "1O", "AGENTD_KB_LEASE": "15"})
	for _, want := range []string{`AGENTD_MAX_CONCURRENT_CALLS: invalid integer "1O"`, `AGENTD_KB_LEASE: invalid duration "15"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("stderr %q lacks %q", got, want)
		}
	}
}

// A flag that does not parse is worded the same way, and points at --help.
func TestFlagValueThatDoesNotParseStopsServe(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-concurrent-calls", "1O"}, `--max-concurrent-calls: invalid integer "1O"`},
		{[]string{"--dial-cps", "fast"}, `--dial-cps: invalid number "fast"`},
		{[]string{"--openai-send-dimensions=yes"}, `--openai-send-dimensions: invalid boolean "yes" (use true or false)`},
		{[]string{"--kb-lease", "15"}, `--kb-lease: invalid duration "15" (use a unit, e.g. 500ms, 30s, 5m)`},
		{[]string{"--log-level", "loud"}, `--log-level: invalid value "loud": use debug, info, warn or error`},
		{[]string{"--log-format", "xml"}, `--log-format: invalid value "xml": use text or json`},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			want := "agentd: " + tc.want + " (see 'agentd serve --help')\n"
			if got := serveWith(t, nil, tc.args...); got != want {
				t.Fatalf("stderr %q, want %q", got, want)
			}
		})
	}
}

// Two flags that do not parse are both named, once, pointing at --help
// (pflag alone stops at the first).
func TestEveryBadFlagIsNamed(t *testing.T) {
	got := serveWith(t, nil, "--max-concurrent-calls", "1O", "--dial-cps", "fast", "--kb-lease=15")
	want := "agentd: --max-concurrent-calls: invalid integer \"1O\"\n--dial-cps: invalid number \"fast\"\n" +
		"--kb-lease: invalid duration \"15\" (use a unit, e.g. 500ms, 30s, 5m) (see 'agentd serve --help')\n"
	if got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
}

// Flag beats env beats default: a good value in the env reaches the config
// (here a 0 that serve's own check then refuses), and a flag given on the
// command line wins over the variable, which is then not read at all.
func TestEnvValueReachesTheConfigAndFlagWins(t *testing.T) {
	const refused = "agentd: --max-concurrent-calls must be at least 1\n"
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"env", map[string]string{"AGENTD_MAX_CONCURRENT_CALLS": "0"}, nil, refused},
		{"flag over bad env", map[string]string{"AGENTD_MAX_CONCURRENT_CALLS": "1O"}, []string{"--max-concurrent-calls", "0"}, refused},
		{"level in capitals", map[string]string{"AGENTD_LOG_LEVEL": "DEBUG", "AGENTD_DIAL_CPS": "0"}, nil, "agentd: --dial-cps must be more than 0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serveWith(t, tc.env, tc.args...); got != tc.want {
				t.Fatalf("stderr %q, want %q", got, tc.want)
			}
		})
	}
}

// Only a flag whose usage names its variable as "(env AGENTD_X)" is checked:
// every variable an env* helper reads for a typed flag must be so named,
// or a bad value in it would pass unseen again.
func TestEveryTypedEnvVariableIsChecked(t *testing.T) {
	named := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if m := cliflags.EnvRef.FindStringSubmatch(f.Usage); m != nil {
					named[m[1]] = true
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot())
	files, _ := filepath.Glob("*.go")
	read := regexp.MustCompile(`cliflags\.(?:Int|Float|Bool|Duration)\("(AGENTD_[A-Z0-9_]+)"`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			n++
			if !named[m[1]] {
				t.Errorf("%s: %s is read but no flag's usage says (env %s)", f, m[1], m[1])
			}
		}
	}
	if n < 20 {
		t.Fatalf("found only %d typed env reads; did the helpers change name?", n)
	}
}

// The shipped binary exits non-zero with the message on stderr and nothing
// on stdout.
func TestBinaryStopsOnBadEnv(t *testing.T) {
	dir := t.TempDir()
	db := dbtest.InDir(t, dir, "agentd.db")
	out, errOut, err := testbin.Run(agentdBin, dir, []string{"AGENTD_DB=" + db, "AGENTD_MAX_CONCURRENT_CALLS=1O"},
		"serve", "--addr", "127.0.0.1:0")
	if err == nil {
		t.Fatal("serve started")
	}
	if want := "agentd: AGENTD_MAX_CONCURRENT_CALLS: invalid integer \"1O\"\n"; errOut != want || out != "" {
		t.Fatalf("stdout %q stderr %q", out, errOut)
	}
	if dbtest.Exists(t, db) {
		t.Fatal("the database was created before the configuration was checked")
	}
}
