package callstore_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/orgstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// bulk copies a row of table n times (see fill) and analyzes the table.
func bulk(t *testing.T, db *storage.Stores, table, where string, n int, overrides string) {
	t.Helper()
	fill(t, db, table, where, n, overrides)
	if _, err := db.Conn().Reader().ExecContext(context.Background(), "ANALYZE "+table); err != nil {
		t.Fatal(err)
	}
}

// fill copies a row of table n times with overrides (a jsonb object built
// from the series number g), without the per-row triggers (and foreign key
// checks: the copies belong to 100 organizations that exist only there).
func fill(t *testing.T, db *storage.Stores, table, where string, n int, overrides string) {
	t.Helper()
	ctx := context.Background()
	err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`WITH c AS MATERIALIZED (SELECT to_jsonb(c) AS j FROM %[1]s c WHERE %[2]s LIMIT 1),
			r AS MATERIALIZED (SELECT jsonb_populate_record(NULL::%[1]s, c.j || %[3]s) AS r FROM c, generate_series(1, %[4]d) g)
			INSERT INTO %[1]s SELECT (r).* FROM r`, table, where, overrides, n))
		if err != nil {
			return fmt.Errorf("fill %s: %w", table, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seqScans is how many sequential scans PostgreSQL counted on each table.
func seqScans(t *testing.T, db *storage.Stores, tables ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, tb := range tables {
		var n int64
		if err := db.Conn().Reader().QueryRowContext(context.Background(),
			"SELECT seq_scan FROM pg_stat_user_tables WHERE relname = ?", tb).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[tb] = n
	}
	return out
}

// The hot paths of the stores, run for real through a handle whose
// sessions always use generic plans (plan_cache_mode=force_generic_plan),
// read the large tables through indexes: the sequential scans PostgreSQL
// counts on them stay put. A hundred organizations hold 60,000 calls (a
// third scheduled for tomorrow), 30,000 events and deliveries and 5,000
// keys; the
// operations run for another, small one, as in a shared database. (Under a
// single organization its count of calls reads them all anyway.)
func TestHotPathsNoSeqScanGeneric(t *testing.T) {
	dbtest.SkipOnSQLite(t, "its query plans")
	ctx := context.Background()
	path := dbtest.Path(t, "agentd.db")
	db := storetest.Open(t, path)
	var orgs [2]string
	var agents [2]string
	var eps [2]string
	for i := range orgs {
		o, err := db.Orgs.CreateOrg(ctx, fmt.Sprintf("org%d", i))
		if err != nil {
			t.Fatal(err)
		}
		a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: o.ID, Name: "a", Type: "voice", Status: "active", PhoneNumbers: []string{fmt.Sprintf("+1555000111%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		ep, err := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: o.ID, URL: "https://example.com/h", Events: []string{"*"}, Secret: "s"})
		if err != nil {
			t.Fatal(err)
		}
		orgs[i], agents[i], eps[i] = o.ID, a.ID, ep.ID
		now := time.Now()
		if _, err := db.Calls.CreateCalls(ctx, []callstore.Call{{OrgID: o.ID, AgentID: a.ID, Status: callstore.CallQueued,
			PhoneNumber: "+14155550000", DueAt: now}, {OrgID: o.ID, AgentID: a.ID, Status: callstore.CallScheduled,
			PhoneNumber: "+14155550001", DueAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		u, err := db.Orgs.AddUser(ctx, o.ID, fmt.Sprintf("u%d@example.com", i), "owner")
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte(fmt.Sprintf("key%d", i)))
		if _, err := db.Orgs.CreateKey(ctx, orgstore.NewKey{OrgID: o.ID, UserID: u.ID, Name: "k", Prefix: "agd_x", Hash: h[:], RateLimit: 600}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 { // deliveries for the small organization's endpoint
		if _, err := db.Webhooks.FanOutEvents(ctx); err != nil {
			t.Fatal(err)
		}
	}
	big := "'" + orgs[1] + "'"
	bulk(t, db, "calls", "org_id = "+big, 60000, `jsonb_build_object('id', 'bulk-' || g, 'org_id', 'bulk-' || g % 100,
		'status', CASE WHEN g % 3 = 0 THEN 'scheduled' ELSE 'completed' END, 'due_at', (c.j->>'due_at')::bigint + 86400000 + g)`)
	bulk(t, db, "events", "org_id = "+big, 30000, `jsonb_build_object('id', 'bulk-' || g, 'org_id', 'bulk-' || g % 100, 'seq', 1000 + g)`)
	bulk(t, db, "webhook_deliveries", "org_id = "+big, 30000, `jsonb_build_object('id', 'bulk-' || g, 'org_id', 'bulk-' || g % 100, 'event_seq', 1000 + g,
		'status', 'succeeded', 'event_id', 'bulk-' || g)`)
	bulk(t, db, "api_keys", "org_id = "+big, 5000, `jsonb_build_object('id', 'bulk-' || g, 'org_id', 'bulk-' || g % 100, 'hash', '\x' || md5(g::text) || md5(g::text))`)
	if _, err := db.Conn().Reader().ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}

	org, agent := orgs[0], agents[0]
	key := sha256.Sum256([]byte("key0"))
	ops := []struct {
		name string
		run  func(s *storage.Stores) error
	}{
		{"scheduler poll", func(s *storage.Stores) error {
			_, err := s.Calls.PromoteDueCalls(ctx, time.Now())
			if err == nil {
				_, _, err = s.Calls.NextDue(ctx, callstore.CallScheduled)
			}
			return err
		}},
		{"dial claim", func(s *storage.Stores) error {
			_, err := s.Calls.ClaimCall(ctx, callstore.Claim{Token: "t-" + time.Now().String(), WorkerID: "w", Now: time.Now(),
				LeaseUntil: time.Now().Add(time.Minute), Budget: &callstore.Budget{Trunk: "sim", Interval: time.Millisecond}})
			return err
		}},
		{"delivery claim", func(s *storage.Stores) error {
			_, err := s.Webhooks.ClaimDeliveries(ctx, hookstore.DeliveryClaim{Token: "d-" + time.Now().String(), WorkerID: "w",
				Now: time.Now(), LeaseUntil: time.Now().Add(time.Minute), Limit: 10, PerEndpoint: 4})
			return err
		}},
		{"event read", func(s *storage.Stores) error {
			_, err := s.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: org, After: sqldb.Pos{Seq: 1}, Limit: 100})
			return err
		}},
		{"fan-out", func(s *storage.Stores) error { _, err := s.Webhooks.FanOutEvents(ctx); return err }},
		{"GET /calls", func(s *storage.Stores) error {
			_, _, err := s.Calls.ListCalls(ctx, callstore.CallFilter{OrgID: org, AgentID: agent, Limit: 50, Desc: true})
			if err == nil {
				_, _, err = s.Calls.ListCalls(ctx, callstore.CallFilter{OrgID: org, Limit: 50})
			}
			return err
		}},
		{"auth lookup", func(s *storage.Stores) error { _, err := s.Orgs.LookupKey(ctx, key[:]); return err }},
	}
	tables := []string{"calls", "events", "webhook_deliveries", "api_keys"}
	for _, op := range ops {
		app := "plan-" + fmt.Sprint(time.Now().UnixNano())
		gen, err := storage.Open(ctx, path+"&plan_cache_mode=force_generic_plan&application_name="+app)
		if err != nil {
			t.Fatal(err)
		}
		before := seqScans(t, db, tables...)
		for range 3 {
			if err := op.run(gen); err != nil {
				t.Fatalf("%s: %v", op.name, err)
			}
		}
		closeFlushed(t, db, gen, app)
		after := seqScans(t, db, tables...)
		for _, tb := range tables {
			if d := after[tb] - before[tb]; d != 0 {
				t.Errorf("%s: %d sequential scans of %s under generic plans", op.name, d, tb)
			}
		}
	}
}
