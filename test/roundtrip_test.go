package test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// An authenticated GET in steady state makes one round trip to PostgreSQL:
// its own query. The key comes from the key cache, the auth epoch from
// memory (invalidated by NOTIFY), the rate limit from this process's
// leased block; pg_stat_statements counts every statement the database
// ran while 300 GETs were served.
func TestAuthenticatedGetIsOneRoundTrip(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("needs " + dbtest.Env + ": counts PostgreSQL statements")
	}
	dir := t.TempDir()
	s := startOn(t, dir, dbtest.Path(t, ""))
	key := s.newKey(100_000)
	stats := openStatements(t, s.db)
	const n = 300
	get := func() {
		if r := s.must("GET", "/api/v1/agents", key, nil); r.status != 200 {
			t.Fatalf("GET /api/v1/agents: %d %s", r.status, r.body)
		}
	}
	for range 20 { // warm: key cache, epoch, the first blocks of the rate limit
		get()
	}
	before := stats.snapshot(t)
	for range n {
		get()
	}
	diff := stats.since(t, before)
	total := 0
	var lines, perRequest []string
	for q, c := range diff {
		total += c
		q = strings.Join(strings.Fields(q), " ")
		lines = append(lines, fmt.Sprintf("%5d  %.160s", c, q))
		if c >= n/10 {
			perRequest = append(perRequest, fmt.Sprintf("%d× %s", c, q))
		}
	}
	sort.Strings(lines)
	t.Logf("%d GETs: %d statements (%.2f a GET)\n%s", n, total, float64(total)/n, strings.Join(lines, "\n"))
	// One statement runs with every GET (the listing); anything else is
	// background work (a worker's safety poll, a rate-limit block).
	if len(perRequest) != 1 || !strings.Contains(perRequest[0], "FROM agents") {
		t.Errorf("statements that ran with the GETs (at least every tenth): %q; want only the listing's own", perRequest)
	}
	if total > n+n/10 {
		t.Errorf("%d statements for %d GETs: more than one round trip a GET", total, n)
	}
}
