package test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// TestPostgresFailover runs agentd on a multi-host URL
// (target_session_attrs=read-write) over a primary and its streaming
// standby (pg_basebackup -R), writing all along; the primary stops and the
// standby is promoted: writes resume on the new primary within 5 s, and
// every write a 2xx acknowledged, before or after, is there.
func TestPostgresFailover(t *testing.T) {
	if !dbtest.Postgres() || testing.Short() {
		t.Skip("PostgreSQL only (" + dbtest.Env + "), not in -short: runs a primary and a standby of its own")
	}
	primary := newPGCluster(t)
	primary.init()
	primary.start()
	standby := newPGCluster(t)
	standby.must("pg_basebackup", "-D", standby.data(), "-R", "-X", "stream", "-h", "127.0.0.1",
		"-p", fmt.Sprint(primary.port), "-U", "agentd")
	standby.conf("hot_standby = on")
	standby.start()

	dir := t.TempDir()
	url := fmt.Sprintf("postgres://agentd@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.host(), standby.host())
	s := startOn(t, dir, url)
	key := s.newKey(100_000)

	var (
		mu       sync.Mutex
		acked    []string
		answered []answer
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				a := answer{at: time.Now(), path: "POST /api/v1/agents"}
				r, err := s.call("POST", "/api/v1/agents", key, map[string]any{"name": fmt.Sprintf("failover %d-%d", w, i),
					"type": "voice", "status": "active", "model": "gpt-4o", "instructions": "Be brief."})
				a.status, a.retry, a.body, a.err = r.status, r.header.Get("Retry-After"), string(r.body), err
				mu.Lock()
				answered = append(answered, a)
				if r.status == 201 {
					var b struct{ Data struct{ ID string } }
					json.Unmarshal(r.body, &b)
					acked = append(acked, b.Data.ID)
				}
				mu.Unlock()
			}
		})
	}
	// Spans of the failover's script, not waits for an event: 2 s of load
	// on the primary, then 6 s of load through the promotion.
	time.Sleep(2 * time.Second)
	primary.stop("fast")
	if out, err := standby.pgctl("promote"); err != nil {
		t.Fatalf("pg_ctl promote: %v\n%s", err, out)
	}
	promoted := time.Now()
	time.Sleep(6 * time.Second) // see above
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	var first time.Time
	for _, a := range answered {
		if a.at.After(promoted) && a.status == 201 {
			first = a.at
			break
		}
	}
	if first.IsZero() {
		t.Fatalf("no write succeeded within 6 s of the promotion\n%s", s.Logs.String())
	}
	t.Logf("first write on the promoted standby %s after its promotion", first.Sub(promoted).Round(time.Millisecond))
	if first.Sub(promoted) > 5*time.Second {
		t.Errorf("writes resumed %s after the promotion, want within 5 s", first.Sub(promoted))
	}
	checkAnswers(t, answered)

	db, err := sql.Open("pgx", standby.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM agents WHERE id = ANY($1)", acked).Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes acknowledged, %d answers", len(acked), len(answered))
	if n != len(acked) {
		t.Errorf("%d of %d acknowledged agents are on the promoted standby", n, len(acked))
	}
}
