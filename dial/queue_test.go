package dial

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// deps are the stores the queue and the scheduler take, as app/features
// passes them.
func deps(db *storage.Stores) Deps {
	return Deps{Calls: db.Calls, Queued: db.Waker(storage.ChanCalls)}
}

// seedAgent makes an org and a voice agent to hang calls on.
func seedAgent(tb testing.TB, db *storage.Stores) (string, string) {
	ctx := context.Background()
	org, err := db.Orgs.CreateOrg(ctx, "q-"+filepath.Base(tb.TempDir()))
	if err != nil {
		tb.Fatal(err)
	}
	h := fnv.New32a() // a number belongs to one organization at a time
	h.Write([]byte(org.ID))
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org.ID, Name: "a", Type: "voice", Status: "active",
		PhoneNumbers: []string{fmt.Sprintf("+1555001%04d", h.Sum32()%10000)}})
	if err != nil {
		tb.Fatal(err)
	}
	return org.ID, a.ID
}

// countingDialer records every (call, attempt) it dials.
type countingDialer struct {
	mu    sync.Mutex
	seen  map[string]int
	sleep time.Duration
}

func (d *countingDialer) Name() string { return "counting" }

func (d *countingDialer) Dial(ctx context.Context, c Call, p func(Progress)) (Result, error) {
	d.mu.Lock()
	d.seen[fmt.Sprintf("%s/%d", c.ID, c.Attempt)]++
	d.mu.Unlock()
	p(Progress{Status: StatusConnecting})
	p(Progress{Status: StatusActive})
	select {
	case <-ctx.Done():
		return Result{Status: StatusCancelled}, nil
	case <-time.After(d.sleep):
	}
	return Result{Status: StatusCompleted, Duration: d.sleep}, nil
}

// Two queues (two workers, as two processes would be) on one database and
// a scheduler: every call is dialled exactly once. Small enough for -race.
// In a synctest bubble a slow machine cannot let a 1 s lease run out under
// a live call: the clock moves only when every goroutine waits.
func TestTwoQueuesNeverDialTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := storage.Open(context.Background(), dbtest.Path(t, "q.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.Conn().Listener().Disable() // a synctest bubble: no goroutine may wait on the network
		_, ids := seedDue(t, db, 40, time.Now().Add(-time.Second))
		d := &countingDialer{seen: map[string]int{}, sleep: 5 * time.Millisecond}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var qs []*Queue
		for range 2 {
			q := NewQueue(QueueConfig{DB: deps(db), Dialer: d, CPS: 1000, MaxConcurrent: 5, Lease: time.Second, Poll: 10 * time.Millisecond})
			qs = append(qs, q)
			wg.Go(func() { q.Run(ctx) })
		}
		s := NewScheduler(deps(db), nil, 10*time.Millisecond, nil, func() { qs[0].Wake(); qs[1].Wake() })
		wg.Go(func() { s.Run(ctx) })
		// 40 calls at 1,000 cps, 5 ms each on 10 lines: well under a second.
		start, done := time.Now(), 0
		if !testkit.Within(time.Second, func() bool {
			calls, _, err := db.Calls.ListCalls(ctx, callstore.CallFilter{OrgID: orgOf(t, db, ids), Statuses: []string{"completed"}, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			done = len(calls)
			return done == len(ids)
		}) {
			t.Fatalf("%d of %d completed after %s", done, len(ids), time.Since(start))
		}
		cancel()
		wg.Wait()
		d.mu.Lock()
		defer d.mu.Unlock()
		if len(d.seen) != len(ids) {
			t.Errorf("%d attempts dialled, want %d", len(d.seen), len(ids))
		}
		for k, n := range d.seen {
			if n != 1 || !strings.HasSuffix(k, "/1") {
				t.Errorf("%s dialled %d times", k, n)
			}
		}
	})
}

// An attempt whose worker died (lease expired) is settled as failed
// (interrupted) and never dialled again; with a retry policy allowing
// failed retries it is scheduled for attempt 2.
func TestRecoverExpiredClaim(t *testing.T) {
	db, err := storage.Open(context.Background(), dbtest.Path(t, "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	orgID, agentID := seedAgent(t, db)
	pol, _ := json.Marshal(RetryPolicy{MaxRetries: 1, RetryOnFailed: true, RetryIntervals: []RetryInterval{{Value: 1, Unit: "minutes"}}})
	now := time.Now().UTC()
	created, err := db.Calls.CreateCalls(ctx, []callstore.Call{
		{OrgID: orgID, AgentID: agentID, Status: callstore.CallQueued, PhoneNumber: "+14155550100", DueAt: now},
		{OrgID: orgID, AgentID: agentID, Status: callstore.CallQueued, PhoneNumber: "+14155550101", DueAt: now, Priority: 9, MaxRetries: 1, RetryPolicy: pol},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A "dead worker" claims both with leases that have already run out.
	for range created {
		if _, ok, err := db.Calls.ClaimNextCall(ctx, callstore.Claim{Token: fmt.Sprint(time.Now().UnixNano()), WorkerID: "dead",
			Now: now, LeaseUntil: now.Add(-time.Millisecond)}); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
	}
	d := &countingDialer{seen: map[string]int{}}
	q := NewQueue(QueueConfig{DB: deps(db), Dialer: d, Lease: time.Second})
	q.recoverExpired(ctx)
	a, _ := db.Calls.GetCall(ctx, orgID, created[0].ID)
	b, _ := db.Calls.GetCall(ctx, orgID, created[1].ID)
	if a.Status != "failed" || a.FailureReason != ReasonInterrupted || a.ClaimToken != "" {
		t.Errorf("no-retry call: %s %q claim %q", a.Status, a.FailureReason, a.ClaimToken)
	}
	if b.Status != "scheduled" || b.Attempts != 1 || b.DueAt.Sub(now) < 59*time.Second {
		t.Errorf("retry call: %s attempts %d due in %s", b.Status, b.Attempts, b.DueAt.Sub(now))
	}
	atts, _ := db.Calls.CallAttempts(ctx, a.ID)
	if len(atts) != 1 || atts[0].Status != "failed" || atts[0].FailureReason != ReasonInterrupted {
		t.Errorf("attempts: %+v", atts)
	}
	if len(d.seen) != 0 {
		t.Errorf("recovery dialled: %v", d.seen)
	}
}

func orgOf(t *testing.T, db *storage.Stores, ids map[string]int) string {
	t.Helper()
	orgs, err := db.Orgs.ListOrgs(context.Background())
	if err != nil || len(orgs) == 0 {
		t.Fatal(err)
	}
	return orgs[len(orgs)-1].ID
}
