// Package test is agentd's reliability and security suite: it runs the
// real binary as a child process on a loopback port and attacks it with
// crashes, load, hostile input and cross-organization requests. Long
// variants are skipped under -short; see RELIABILITY.md.
package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	// The suite tests the binary TestMain builds from this code; importing
	// it makes go test's cache see every change to it.
	_ "github.com/agentd/agentd/cmd"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

var agentdBin string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, &agentdBin)) }

// server is one running agentd child process (testbin.Server: its URL,
// owner Key, Logs, Kill and Stop) with the suite's HTTP and CLI helpers.
type server struct {
	*testbin.Server
	t  testing.TB
	db string
}

// start runs agentd serve on dir's database (dir/agentd.db, or on
// PostgreSQL the database dbtest.InDir gives dir, the same at every start
// on dir) with extra flags and waits until it answers /healthz.
func start(t testing.TB, dir string, extra ...string) *server {
	t.Helper()
	db := dbtest.InDir(t, dir, "agentd.db")
	p := testbin.Serve(t, testbin.Proc{Bin: agentdBin, Dir: dir, Args: append([]string{"--db", db, "--log-format", "json"}, extra...)})
	return &server{Server: p, t: t, db: db}
}

// cli runs an agentd CLI command on the server's database and returns its
// stdout.
func (s *server) cli(args ...string) string {
	s.t.Helper()
	out, errOut, err := testbin.Run(agentdBin, "", nil, append([]string{"--db", s.db}, args...)...)
	if err != nil {
		s.t.Fatalf("agentd %v: %v\n%s%s", args, err, out, errOut)
	}
	return out
}

// newOrg creates an organization through the CLI and returns its owner key.
func (s *server) newOrg(name string) string {
	s.t.Helper()
	var o struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(s.cli("org", "create", name, "--owner", "owner@"+name+".test", "--json")), &o); err != nil {
		s.t.Fatal(err)
	}
	return o.Key
}

// resp is a decoded HTTP answer.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json() map[string]any {
	var m map[string]any
	json.Unmarshal(r.body, &m)
	return m
}

var client = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// call sends method path with body (nil, string/[]byte as is, or JSON of a
// value) and the key in x-api-key.
func (s *server) call(method, path, key string, body any) (resp, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, rd)
	if err != nil {
		return resp{}, err
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	r, err := client.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, b}, err
}

// must is call that fails the test on a transport error.
func (s *server) must(method, path, key string, body any) resp {
	s.t.Helper()
	r, err := s.call(method, path, key, body)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// snapshot hashes every row of every table except those that change on
// their own (migrations bookkeeping, the shared rate limit's request
// counts), so a test can prove a request
// changed nothing.
func snapshot(t testing.TB, dbPath string) string {
	t.Helper()
	db := dbtest.Open(t, dbPath)
	defer db.Close()
	q := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%' AND name NOT LIKE '%vec%' AND name != 'rate_buckets' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
	if dbtest.Postgres() {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT LIKE '%vec%' AND table_name != 'rate_buckets' ORDER BY table_name"
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var out strings.Builder
	for _, tb := range tables {
		r, err := db.Query(fmt.Sprintf("SELECT * FROM %q", tb))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := r.Columns()
		var lines []string
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			r.Scan(ptrs...)
			lines = append(lines, fmt.Sprint(vals...))
		}
		r.Close()
		fmt.Fprintf(&out, "%s %d %x\n", tb, len(lines), hashLines(lines))
	}
	return out.String()
}

func hashLines(lines []string) uint64 {
	var h uint64 = 1469598103934665603
	for _, l := range lines {
		var x uint64 = 1469598103934665603
		for i := 0; i < len(l); i++ {
			x ^= uint64(l[i])
			x *= 1099511628211
		}
		h += x // order-independent
	}
	return h
}
