package api

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// widgetMinute is how long a per-minute widget limit remembers a message:
// a minute in one SQLite process's windows, 61 one-second buckets in the
// leases PostgreSQL's processes share.
func widgetMinute() time.Duration {
	if dbtest.Postgres() {
		return 61 * time.Second
	}
	return time.Minute
}

// Three agentd processes on one PostgreSQL database share the widget's
// limits: one visitor's messages through all three, one address's
// messages and its new sessions stay within the limit plus one block per
// process in a minute (the leases' bound, app/access/lease.go), where a
// window per process admitted three times the limit.
func TestWidgetLimitsAcrossProcesses(t *testing.T) {
	dbtest.SkipOnSQLite(t, "one SQLite process counts the widget's limits in memory")
	const visitor, address, sessions = 4, 9, 5
	limits := func(c *serveConfig) {
		c.Widget.VisitorPerMinute, c.Widget.AddressPerMinute, c.Widget.SessionsPerMinute = visitor, address, sessions
	}
	path := ""
	e := newWidgetEnv(t, false, nil, limits, func(c *serveConfig) { path = c.DBPath })
	procs := []*testEnv{e.testEnv}
	for range 2 {
		procs = append(procs, startTestEnv(t, path, limits, func(c *serveConfig) {
			c.Widget.Now = func() time.Time { return time.Unix(0, e.clock.Load()) }
		}))
	}
	const origin = "http://localhost:8123"
	// count tallies the answers: 200/201 admitted, 429 with Retry-After
	// and the refusal's words, anything else fails.
	count := func(what string, code int, h map[string][]string, b []byte, refusal string, admitted *int) {
		t.Helper()
		ra, _ := strconv.Atoi(strings.Join(h["Retry-After"], ""))
		switch {
		case code == 200 || code == 201:
			*admitted++
		case code == 429 && strings.Contains(string(b), refusal) && ra >= 1 && ra <= 61:
		default:
			t.Fatalf("%s: %d Retry-After %d %s", what, code, ra, b)
		}
	}
	bound := func(what string, admitted, limit int) {
		t.Helper()
		t.Logf("%s: %d admitted through %d processes (limit %d)", what, admitted, len(procs), limit)
		if admitted < limit || admitted > limit+len(procs) {
			t.Errorf("%s: %d admitted, want %d to %d", what, admitted, limit, limit+len(procs))
		}
	}

	// One visitor, its messages round robin over the processes.
	s := e.widgetSession(e.agentID, origin)
	admitted := 0
	for i := range 3 * visitor {
		code, h, b := procs[i%3].widgetSay(s, origin, "When do you open?")
		count("visitor message "+strconv.Itoa(i), code, h, b, "too many messages; wait", &admitted)
	}
	bound("one visitor's messages", admitted, visitor)

	// Four visitors of one address: together more than the address may send.
	e.advance(widgetMinute())
	var vs []widgetSession
	for i := range 4 {
		vs = append(vs, procs[i%3].widgetSession(e.agentID, origin))
	}
	admitted = 0
	for i := range 3 * address {
		code, h, b := procs[i%3].widgetSay(vs[i%4], origin, "When do you open?")
		if code == 429 && strings.Contains(string(b), "too many messages; wait") {
			continue // the visitor's own limit
		}
		count("address message "+strconv.Itoa(i), code, h, b, "from this address", &admitted)
	}
	bound("one address's messages", admitted, address)

	// New sessions of one address.
	e.advance(widgetMinute())
	admitted = 0
	for i := range 3 * sessions {
		code, h, b := procs[i%3].pub("POST", "/api/public/chat/"+e.agentID+"/sessions", origin, "", map[string]any{})
		count("session "+strconv.Itoa(i), code, h, b, "new conversations", &admitted)
	}
	bound("one address's new sessions", admitted, sessions)
}
