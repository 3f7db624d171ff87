package cmd

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to count the target's rows independently

	"github.com/agentd/agentd/app"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// migServer is agentd serving one database in-process: the real code
// paths write the install that migrate-db moves, and read it back after.
type migServer struct {
	t      *testing.T
	url    string
	key    string // owner key printed at the first start
	setup  string // setup link printed at the first start
	cookie []*http.Cookie
	last   []byte // the latest response body
	stop   func()
}

func startMigServer(t *testing.T, dbPath string) *migServer {
	t.Helper()
	var out bytes.Buffer
	cfg := app.Config{DBPath: dbPath, Addr: "127.0.0.1:0", Version: "test", Out: &out,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		KB:       kb.Config{EmbedDims: 64},
		Calls:    calls.Config{Dialer: "sim", SimRing: 10 * time.Millisecond, SimTalk: 20 * time.Millisecond, DialCPS: 200, MaxConcurrent: 20, Poll: 50 * time.Millisecond, Lease: 2 * time.Second, Drain: time.Second},
		Webhooks: events.Config{AllowPrivate: true, Poll: 50 * time.Millisecond, Timeout: 2 * time.Second}}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("open %s: %v", dbPath, err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	s := &migServer{t: t, url: "http://" + a.Addr()}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, ok := strings.CutPrefix(line, "owner API key: "); ok {
			s.key, _, _ = strings.Cut(k, " ")
		}
		if l, ok := strings.CutPrefix(line, "setup link: "); ok {
			s.setup = l
		}
	}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		a.Close()
	}
	t.Cleanup(s.stop)
	return s
}

// call sends a JSON request with key (or the session cookie when key is
// "") and decodes the response's data into out; it returns the status.
func (s *migServer) call(method, path, key string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	for _, c := range s.cookie {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if key == "" && len(resp.Cookies()) > 0 {
		s.cookie = resp.Cookies()
	}
	raw, _ := io.ReadAll(resp.Body)
	s.last = raw
	if out != nil {
		var env struct{ Data json.RawMessage }
		if err := json.Unmarshal(raw, &env); err != nil || json.Unmarshal(env.Data, out) != nil {
			s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode
}

// must is call that fails the test unless the status is want.
func (s *migServer) must(want int, method, path, key string, body, out any) {
	s.t.Helper()
	if code := s.call(method, path, key, body, out); code != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, s.last)
	}
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, cond, "timed out waiting for %s", what)
}

// searchTop is the documents and chunks a hybrid search ranks first.
func (s *migServer) searchTop(key, col, query string) []string {
	s.t.Helper()
	var res struct{ Results []kb.Result }
	s.must(200, "POST", "/api/v1/kb/search", key, map[string]any{"collectionId": col, "query": query, "limit": 5}, &res)
	var out []string
	for _, r := range res.Results {
		out = append(out, fmt.Sprintf("%s#%d", r.ExternalID, r.ChunkIndex))
	}
	return out
}

// install is what fillInstall made and what the copy must keep working.
type install struct {
	key, ciKey, col string
	searches        map[string][]string // query -> top results on the source
	agents          json.RawMessage     // the workforce view, counters included
}

// fillInstall builds a realistic install through the HTTP API: members and
// keys, a dashboard session, agents, knowledge embedded into vectors,
// listings, a finished batch of calls with results, webhook deliveries,
// do-not-call numbers and calling hours.
func fillInstall(t *testing.T, s *migServer) install {
	in := install{key: s.key, searches: map[string][]string{}}
	var hits atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(recv.Close)
	var hook struct{ ID string }
	s.must(201, "POST", "/api/v2/webhooks", in.key, map[string]any{"url": recv.URL + "/hook", "events": []string{"*"}}, &hook)

	var key struct{ Key string }
	s.must(201, "POST", "/api/v2/api-keys", in.key, map[string]any{"name": "ci", "expiresInDays": 30}, &key)
	in.ciKey = key.Key
	s.must(201, "POST", "/api/v2/members", in.key, map[string]any{"email": "dev@example.test", "role": "member"}, nil)
	token := s.setup[strings.Index(s.setup, "token=")+len("token="):]
	s.must(200, "POST", "/api/v2/auth/setup", "", map[string]string{"token": token, "password": "correct horse battery"}, nil)
	s.call("POST", "/api/v2/auth/login", "", map[string]string{"email": "dev@example.test", "password": "wrong password"}, nil)

	var agent struct{ ID string }
	s.must(201, "POST", "/api/v1/agents", in.key, map[string]any{"name": "desk", "type": "voice", "phoneNumbers": []string{"+15551230000"}}, &agent)
	s.must(201, "POST", "/api/v1/agents", in.key, map[string]any{"name": "chat", "type": "chat"}, nil)
	s.must(201, "POST", "/api/v2/jobs", in.key, map[string]any{"agentId": agent.ID, "name": "Follow up"}, nil)

	var col struct{ ID string }
	s.must(201, "POST", "/api/v1/kb/collections", in.key, map[string]any{"name": "docs"}, &col)
	in.col = col.ID
	docs := map[string]string{
		"install": "# Install\n\nDownload the binary and run agentd serve. The server listens on port 8080.\n\n## Upgrade\n\nStop the server, replace the binary, start it again.",
		"billing": "# Billing\n\nInvoices are sent monthly. Refunds take five business days to reach your card.",
		"phones":  "# Phone numbers\n\nBuy a number from your SIP trunk and assign it to a voice agent. Caller ID must be verified.",
		"kb":      "# Knowledge\n\nUpload Markdown sources; they are chunked by heading and embedded for hybrid search.",
	}
	for ext, content := range docs {
		s.must(200, "POST", "/api/v1/kb/sources", in.key, map[string]any{"collectionId": in.col, "externalId": ext, "title": ext, "content": content}, nil)
	}
	waitFor(t, "sources embedded", func() bool {
		var l struct{ Sources []struct{ Status string } }
		s.must(200, "GET", "/api/v1/kb/sources?limit=100&collectionId="+in.col, in.key, nil, &l)
		n := 0
		for _, src := range l.Sources {
			if src.Status == "completed" {
				n++
			}
		}
		return n == len(docs)
	})
	for _, q := range []string{"how do I upgrade the server", "refund to my card", "caller id sip trunk"} {
		in.searches[q] = s.searchTop(in.key, in.col, q)
		if len(in.searches[q]) == 0 {
			t.Fatalf("search %q found nothing on the source", q)
		}
	}

	s.must(200, "POST", "/api/v1/listings/sync", in.key, map[string]any{"listings": []map[string]any{
		{"externalId": "l1", "title": "Red bike", "category": "bikes", "price": 120, "attributes": map[string]any{"color": "red", "size": []string{"m", "l"}}},
		{"externalId": "l2", "title": "Blue sofa", "category": "home", "price": 300.5},
		{"externalId": "l3", "title": "Green lamp"},
	}}, nil)

	s.must(200, "POST", "/api/v1/dnc", in.key, map[string]any{"numbers": []string{"+14155550999", "+14155550998"}, "reason": "asked"}, nil)
	var batch struct{ BatchID string }
	items := []map[string]any{}
	for i := range 6 {
		items = append(items, map[string]any{"contactPhone": fmt.Sprintf("+1415555%04d", i)})
	}
	s.must(201, "POST", "/api/v1/calls/batch", in.key, map[string]any{"agentId": agent.ID, "name": "spring", "calls": items}, &batch)
	var first string
	waitFor(t, "the batch to finish", func() bool {
		var b struct {
			Status string
			Total  int
		}
		s.must(200, "GET", "/api/v1/calls/batches/"+batch.BatchID, in.key, nil, &b)
		return b.Status == "completed" && b.Total == 6
	})
	var list struct{ Calls []struct{ ID string } }
	s.must(200, "GET", "/api/v1/calls?limit=10", in.key, nil, &list)
	if len(list.Calls) == 0 {
		t.Fatal("no calls listed")
	}
	first = list.Calls[0].ID
	s.must(200, "POST", "/api/v1/calls/"+first+"/result", in.key, map[string]any{"summary": "booked", "outcome": "booked",
		"transcript": []map[string]any{{"role": "agent", "text": "hello", "at": "2026-06-10T14:00:01Z"}}}, nil)
	s.must(200, "PATCH", "/api/v2/organization/settings", in.key, map[string]any{"callingHours": map[string]any{
		"enabled": true, "start": "08:00", "end": "20:00", "defaultTimezone": "Europe/Paris"}}, nil)
	waitFor(t, "webhook deliveries", func() bool {
		var d struct{ Deliveries []struct{ Status string } }
		s.must(200, "GET", "/api/v2/webhooks/"+hook.ID+"/deliveries?limit=100", in.key, nil, &d)
		for _, x := range d.Deliveries {
			if x.Status != "succeeded" {
				return false
			}
		}
		return len(d.Deliveries) > 5 && hits.Load() > 5
	})
	var workers json.RawMessage
	s.must(200, "GET", "/api/v2/agents", in.key, nil, &workers)
	in.agents = workers
	return in
}

// tableCounts counts every table of the database at dsn, by name, with
// driver "sqlite" or "pgx", independently of agentd's storage.
func tableCounts(t *testing.T, driver, dsn string) map[string]int64 {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if driver == "pgx" {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int64{}
	for _, n := range names {
		var c int64
		if err := db.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	return out
}

// A real install moves to PostgreSQL whole: same counts in every table, the
// same keys and sessions sign in, the same search answers, and new rows
// take new ids. A second copy into the now used database is refused.
func TestMigrateDBToPostgres(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("migrate-db needs a PostgreSQL server: set " + dbtest.Env + " (see .ci/postgres.sh)")
	}
	src := filepath.Join(t.TempDir(), "agentd.db")
	s := startMigServer(t, src)
	in := fillInstall(t, s)
	cookie := s.cookie
	s.stop()
	before := tableCounts(t, "sqlite", src)
	for _, tb := range []string{"agent_jobs", "vectors", "kb_chunks", "listings", "listing_attrs", "calls", "call_attempts", "call_results", "call_batches",
		"webhook_deliveries", "webhook_attempts", "events", "dnc_numbers", "org_settings", "sessions", "login_failures", "call_hours"} {
		if before[tb] == 0 {
			t.Errorf("the install has no %s rows", tb)
		}
	}

	target := dbtest.Path(t, "target")
	out, errOut, err := runAgentCLI(t, src, "migrate-db", "--to", target)
	if err != nil {
		t.Fatalf("migrate-db: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, "every table's count matches") || !strings.Contains(out, "vectors") ||
		strings.Contains(out+errOut, "postgres://") || !strings.Contains(errOut, "vectors: ") {
		t.Fatalf("output:\n%s\nstderr:\n%s", out, errOut)
	}
	t.Logf("migrate-db printed:\n%s", out)
	after := tableCounts(t, "pgx", target)
	for tb, n := range before {
		if tb != "schema_migrations" && after[tb] != n {
			t.Errorf("%s: %d rows in SQLite, %d in PostgreSQL", tb, n, after[tb])
		}
	}
	if after["schema_migrations"] != before["schema_migrations"] {
		t.Errorf("schema_migrations: %d and %d", before["schema_migrations"], after["schema_migrations"])
	}

	p := startMigServer(t, target)
	if p.key != "" {
		t.Fatal("the copied install was taken for a first start")
	}
	for _, k := range []string{in.key, in.ciKey} {
		p.must(200, "GET", "/api/v2/api-keys", k, nil, nil)
	}
	p.must(401, "GET", "/api/v2/api-keys", "agd_not_a_key", nil, nil)
	p.cookie = cookie
	p.must(200, "GET", "/api/v2/auth/me", "", nil, nil)
	for q, want := range in.searches {
		if got := p.searchTop(in.key, in.col, q); !slices.Equal(got, want) {
			t.Errorf("search %q: %v on PostgreSQL, %v on SQLite", q, got, want)
		}
	}
	var workers json.RawMessage
	p.must(200, "GET", "/api/v2/agents", in.key, nil, &workers)
	if !bytes.Equal(workers, in.agents) {
		t.Errorf("workforce view differs:\n%s\n%s", workers, in.agents)
	}
	// New rows: identities continue after the copied ones.
	p.must(201, "POST", "/api/v1/agents", in.key, map[string]any{"name": "new", "type": "chat"}, nil)
	p.must(200, "POST", "/api/v1/kb/sources", in.key, map[string]any{"collectionId": in.col, "externalId": "new", "title": "new",
		"content": "# Warranty\n\nEvery bike has a two year warranty."}, nil)
	p.must(200, "POST", "/api/v1/listings/sync", in.key, map[string]any{"listings": []map[string]any{{"externalId": "l4", "title": "Yellow kite"}}}, nil)
	waitFor(t, "the new source embedded on PostgreSQL", func() bool {
		top := p.searchTop(in.key, in.col, "bike warranty")
		return len(top) > 0 && top[0] == "new#0"
	})
	p.stop()

	// Copying again into the used database is refused, naming a table.
	_, _, err = runAgentCLI(t, src, "migrate-db", "--to", target)
	if err == nil || !strings.Contains(err.Error(), "not empty: table ") {
		t.Fatalf("second copy: %v", err)
	}
}

// A copy that fails half way (a text value PostgreSQL cannot store) exits
// non-zero, commits nothing, and the next copy of a fixed source works.
func TestMigrateDBFailureCommitsNothing(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("migrate-db needs a PostgreSQL server: set " + dbtest.Env + " (see .ci/postgres.sh)")
	}
	// The source is a SQLite file whatever backend the suite runs on.
	src := filepath.Join(t.TempDir(), "agentd.db")
	if _, _, err := runAgentCLI(t, src, "org", "create", "acme", "--owner", "owner@acme.test"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runAgentCLI(t, src, "agent", "create", "--name", "desk", "--type", "chat"); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("INSERT INTO login_failures (scope, at) VALUES ('email:x' || char(0), 1)"); err != nil {
		t.Fatal(err)
	}
	target := dbtest.Path(t, "target")
	dir := t.TempDir()
	out, errOut, err := testbin.Run(agentdBin, dir, nil, "migrate-db", "--from", src, "--to", target)
	if err == nil || !strings.Contains(errOut, "agentd: ") || !strings.Contains(errOut, "login_failures") ||
		strings.Contains(out, "count matches") {
		t.Fatalf("bad row copied: %v\n%s\n%s", err, out, errOut)
	}
	counts := tableCounts(t, "pgx", target)
	for tb, n := range counts {
		if n != 0 && tb != "schema_migrations" && tb != "auth_epoch" {
			t.Errorf("after the failed copy %s has %d rows", tb, n)
		}
	}
	if _, err := raw.Exec("DELETE FROM login_failures"); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := testbin.Run(agentdBin, dir, nil, "--json", "migrate-db", "--from", src, "--to", target); err != nil ||
		!strings.Contains(out, `"verified": true`) {
		t.Fatalf("copy after the fix: %v\n%s\n%s", err, out, errOut)
	}
}

// Wrong kinds of --from and --to are refused before anything is opened,
// without echoing a URL (it may hold a password) or creating a file.
func TestMigrateDBRefusals(t *testing.T) {
	dir := t.TempDir()
	secret := "postgres://agentd:s3cret@127.0.0.1:1/agentd"
	missing := filepath.Join(dir, "missing.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate-db", "--from", secret, "--to", secret}, "--from names a PostgreSQL database"},
		{[]string{"--db", secret, "migrate-db", "--to", secret}, "--from names a PostgreSQL database"},
		{[]string{"migrate-db", "--from", missing, "--to", filepath.Join(dir, "x.db")}, "--to must be a postgres:// or postgresql:// URL"},
		{[]string{"migrate-db", "--from", missing, "--to", "host=db password=s3cret"}, "--to must be a postgres://"},
		{[]string{"migrate-db", "--from", missing, "--to", secret}, "no SQLite database at " + missing},
		{[]string{"migrate-db", "--from", missing}, `required flag(s) "to" not set`},
	} {
		out, errOut, err := testbin.Run(agentdBin, dir, []string{"AGENTD_DB="}, tc.args...)
		if err == nil || !strings.HasPrefix(errOut, "agentd: ") || !strings.Contains(errOut, tc.want) ||
			strings.Contains(out+errOut, "s3cret") {
			t.Errorf("%v: %v\nstdout %q\nstderr %q", tc.args, err, out, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("files created: %v", entries)
	}
}
