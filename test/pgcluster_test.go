package test

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/testbin"
)

// pgCluster is a PostgreSQL cluster of the test's own, for tests that stop,
// restart or promote the server (the shared one of AGENTD_TEST_POSTGRES
// must stay up for the other tests). As root it runs as the user postgres
// (or nobody), as .ci/postgres.sh does: PostgreSQL refuses root.
type pgCluster struct {
	t     testing.TB
	bin   string
	dir   string // holds data/ and the socket
	port  int
	owner string // "" when the test is not root
}

// pgBin is the directory of PostgreSQL's binaries, or "" without them.
func pgBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

// newPGCluster makes an empty, stopped cluster directory (initdb runs in
// init, or pg_basebackup fills it for a standby).
func newPGCluster(t testing.TB) *pgCluster {
	t.Helper()
	bin := pgBin()
	if bin == "" {
		t.Skip("no PostgreSQL binaries (apt-get install postgresql)")
	}
	dir, err := os.MkdirTemp("", "agentd-pgc")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{t: t, bin: bin, dir: dir}
	if os.Getuid() == 0 {
		c.owner = "nobody"
		if _, err := user.Lookup("postgres"); err == nil {
			c.owner = "postgres"
		}
		c.run("", "chown", "-R", c.owner, dir) // nothing runs as owner yet: chown as root
		os.Chmod(dir, 0o755)
	}
	c.port, _ = strconv.Atoi(testbin.FreeAddr(t)[len("127.0.0.1:"):])
	t.Cleanup(func() {
		c.pgctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	return c
}

// run runs name args as the user as ("" is this process's) and returns
// its output.
func (c *pgCluster) run(as, name string, args ...string) (string, error) {
	var cmd *exec.Cmd
	if as != "" {
		cmd = exec.Command("runuser", append([]string{"-u", as, "--", name}, args...)...)
	} else {
		cmd = exec.Command(name, args...)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs the PostgreSQL binary name as the cluster's owner and fails
// the test on an error.
func (c *pgCluster) must(name string, args ...string) string {
	c.t.Helper()
	out, err := c.run(c.owner, filepath.Join(c.bin, name), args...)
	if err != nil {
		c.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

// init runs initdb with a replication-ready configuration: durable commits
// (an acknowledged write must survive an immediate stop), fsync off (the
// machine does not crash, only the server stops).
func (c *pgCluster) init() {
	c.t.Helper()
	c.must("initdb", "-D", c.data(), "-U", "agentd", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	c.conf("fsync = off", "wal_level = replica", "max_wal_senders = 4", "listen_addresses = '127.0.0.1'",
		"max_connections = 200")
	f, err := os.OpenFile(filepath.Join(c.data(), "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintln(f, "host replication agentd 127.0.0.1/32 trust")
	f.Close()
}

// conf appends lines to postgresql.conf, with this cluster's port and
// socket directory.
func (c *pgCluster) conf(lines ...string) {
	c.t.Helper()
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	lines = append(lines, fmt.Sprintf("port = %d", c.port), fmt.Sprintf("unix_socket_directories = '%s'", c.dir))
	fmt.Fprintln(f, strings.Join(lines, "\n"))
}

// pgctl runs pg_ctl on the cluster; errors are returned, not fatal.
func (c *pgCluster) pgctl(args ...string) (string, error) {
	return c.run(c.owner, filepath.Join(c.bin, "pg_ctl"), append([]string{"-D", c.data(), "-w"}, args...)...)
}

func (c *pgCluster) start() {
	c.t.Helper()
	if out, err := c.pgctl("-l", filepath.Join(c.dir, "server.log"), "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		c.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

func (c *pgCluster) stop(mode string) {
	c.t.Helper()
	if out, err := c.pgctl("-m", mode, "stop"); err != nil {
		c.t.Fatalf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
}

// host is the cluster's address for a URL.
func (c *pgCluster) host() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }

// url is a URL of database db on the cluster.
func (c *pgCluster) url(db string) string {
	return fmt.Sprintf("postgres://agentd@%s/%s?sslmode=disable", c.host(), db)
}
