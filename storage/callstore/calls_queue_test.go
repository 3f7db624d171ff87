package callstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// queueDB is a database with an organization, a voice agent and a fixed
// "now" the tests move by hand.
type queueDB struct {
	*callstore.Calls
	db    *storage.Stores
	t     *testing.T
	org   string
	agent string
	now   time.Time
}

func newQueueDB(t *testing.T) *queueDB {
	t.Helper()
	ctx := context.Background()
	db := storetest.Fresh(t)
	o, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: o.ID, Name: "Dialer", Type: "voice", Status: "active", PhoneNumbers: []string{"+15550001111"}})
	if err != nil {
		t.Fatal(err)
	}
	return &queueDB{Calls: db.Calls, db: db, t: t, org: o.ID, agent: a.ID, now: time.Now().UTC().Truncate(time.Millisecond)}
}

// add stores calls in the status, due at now+due each, with priorities.
func (q *queueDB) add(status string, due time.Duration, prios ...int) []string {
	q.t.Helper()
	var cs []callstore.Call
	for i, p := range prios {
		cs = append(cs, callstore.Call{OrgID: q.org, AgentID: q.agent, Status: status, PhoneNumber: fmt.Sprintf("+1415555%04d", i),
			Priority: p, DueAt: q.now.Add(due)})
	}
	created, err := q.CreateCalls(context.Background(), cs)
	if err != nil {
		q.t.Fatal(err)
	}
	var ids []string
	for _, c := range created {
		ids = append(ids, c.ID)
	}
	return ids
}

// claim claims the next due call for worker w with a lease of 30 s.
func (q *queueDB) claim(w string) (callstore.Call, bool) {
	q.t.Helper()
	c, ok, err := q.ClaimNextCall(context.Background(), callstore.Claim{Token: fmt.Sprintf("%s-%d", w, time.Now().UnixNano()),
		WorkerID: w, Dialer: "sim", Now: q.now, LeaseUntil: q.now.Add(30 * time.Second)})
	if err != nil {
		q.t.Fatal(err)
	}
	return c, ok
}

func (q *queueDB) get(id string) callstore.Call {
	q.t.Helper()
	c, err := q.GetCall(context.Background(), q.org, id)
	if err != nil {
		q.t.Fatal(err)
	}
	return c
}

func (q *queueDB) attempts(id string) []callstore.CallAttempt {
	q.t.Helper()
	as, err := q.CallAttempts(context.Background(), id)
	if err != nil {
		q.t.Fatal(err)
	}
	return as
}

// New calls due now are queued, due later scheduled; scheduled calls are
// queued when they fall due.
func TestPromoteDueCalls(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	now := q.add(callstore.CallInitiated, 0, 0, 0)
	later := q.add(callstore.CallInitiated, time.Hour, 0)
	if n, err := q.PromoteDueCalls(ctx, q.now); err != nil || n != 2 {
		t.Fatalf("promoted %d, %v; want the 2 due now", n, err)
	}
	if s := q.get(now[0]).Status; s != callstore.CallQueued {
		t.Fatalf("due call is %s", s)
	}
	if s := q.get(later[0]).Status; s != callstore.CallScheduled {
		t.Fatalf("later call is %s", s)
	}
	if n, err := q.PromoteDueCalls(ctx, q.now); err != nil || n != 0 {
		t.Fatalf("nothing due: promoted %d, %v", n, err)
	}
	if at, ok, err := q.NextDue(ctx, callstore.CallScheduled); err != nil || !ok || !at.Equal(q.now.Add(time.Hour)) {
		t.Fatalf("next scheduled: %v %v %v", at, ok, err)
	}
	if _, ok, err := q.NextDue(ctx, callstore.CallActive); err != nil || ok {
		t.Fatalf("next active: %v %v", ok, err)
	}
	if n, err := q.PromoteDueCalls(ctx, q.now.Add(time.Hour)); err != nil || n != 1 || q.get(later[0]).Status != callstore.CallQueued {
		t.Fatalf("an hour later: promoted %d, %v", n, err)
	}
}

// Claims take the lowest priority number first, then the earliest due
// time, skip calls not due yet, and record the attempt.
func TestClaimOrderAndAttempt(t *testing.T) {
	q := newQueueDB(t)
	late := q.add(callstore.CallQueued, -time.Second, 5)[0]
	early := q.add(callstore.CallQueued, -time.Minute, 5)[0]
	urgent := q.add(callstore.CallQueued, 0, 0)[0]
	q.add(callstore.CallQueued, time.Minute, 0) // not due yet
	var got []string
	for {
		c, ok := q.claim("w1")
		if !ok {
			break
		}
		if c.Status != callstore.CallConnecting || c.Attempts != 1 || c.WorkerID != "w1" || c.Dialer != "sim" ||
			c.ClaimToken == "" || c.StartedAt == nil || !c.StartedAt.Equal(q.now) || c.AgentName != "Dialer" {
			t.Fatalf("claimed %+v", c)
		}
		as := q.attempts(c.ID)
		if len(as) != 1 || as[0].Attempt != 1 || as[0].Status != callstore.CallConnecting {
			t.Fatalf("attempts %+v", as)
		}
		got = append(got, c.ID)
	}
	if want := []string{urgent, early, late}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("claimed %v, want %v", got, want)
	}
}

// Many workers on two handles (two processes) claim every due call
// exactly once.
func TestClaimsNeverOverlap(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	ids := q.add(callstore.CallQueued, 0, make([]int, 60)...)
	other := storetest.Open(t, q.db.Path())
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range 6 {
		db := q.db
		if w%2 == 1 {
			db = other
		}
		wg.Go(func() {
			for {
				c, ok, err := db.Calls.ClaimNextCall(ctx, callstore.Claim{Token: fmt.Sprintf("w%d-%d", w, time.Now().UnixNano()),
					WorkerID: fmt.Sprint("w", w), Now: q.now, LeaseUntil: q.now.Add(time.Minute)})
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				seen[c.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(ids) {
		t.Fatalf("%d of %d calls claimed", len(seen), len(ids))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("call %s claimed %d times", id, n)
		}
	}
}

// Progress and settling are guarded by the claim token: a stale token or a
// cancelled call changes nothing.
func TestProgressAndFinishNeedTheClaim(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	q.add(callstore.CallQueued, 0, 0)
	c, _ := q.claim("w1")
	if live, err := q.RecordProgress(ctx, c.ID, "stale", callstore.Progress{Status: callstore.CallRinging, At: q.now}); err != nil || live {
		t.Fatalf("stale token progress: live %v, %v", live, err)
	}
	answered := q.now.Add(2 * time.Second)
	if live, err := q.RecordProgress(ctx, c.ID, c.ClaimToken, callstore.Progress{Status: callstore.CallActive, RoomID: "room-1", At: answered}); err != nil || !live {
		t.Fatalf("progress: live %v, %v", live, err)
	}
	got := q.get(c.ID)
	if got.Status != callstore.CallActive || got.RoomID != "room-1" || got.AnsweredAt == nil || !got.AnsweredAt.Equal(answered) {
		t.Fatalf("after progress: %+v", got)
	}
	if as := q.attempts(c.ID); as[0].Status != callstore.CallActive || as[0].RoomID != "room-1" {
		t.Fatalf("attempt after progress: %+v", as)
	}
	if ok, err := q.FinishAttempt(ctx, c.ID, "stale", callstore.Outcome{Status: callstore.CallCompleted, EndedAt: q.now}); err != nil || ok {
		t.Fatalf("stale token settled: %v %v", ok, err)
	}
	dur := 12.5
	ended := q.now.Add(15 * time.Second)
	if ok, err := q.FinishAttempt(ctx, c.ID, c.ClaimToken, callstore.Outcome{Status: callstore.CallCompleted, SIPCode: 200, Duration: &dur, Summary: "ok", EndedAt: ended}); err != nil || !ok {
		t.Fatalf("settle: %v %v", ok, err)
	}
	got = q.get(c.ID)
	if got.Status != callstore.CallCompleted || got.ClaimToken != "" || got.WorkerID != "" || got.LeaseUntil != nil ||
		got.Duration == nil || *got.Duration != dur || got.SIPCode != 200 || got.EndedAt == nil || !got.EndedAt.Equal(ended) {
		t.Fatalf("settled call: %+v", got)
	}
	as := q.attempts(c.ID)
	if len(as) != 1 || as[0].Status != callstore.CallCompleted || as[0].EndedAt == nil || as[0].Duration == nil {
		t.Fatalf("settled attempt: %+v", as)
	}
	// Settled once: the same token cannot settle it again.
	if ok, err := q.FinishAttempt(ctx, c.ID, c.ClaimToken, callstore.Outcome{Status: callstore.CallFailed, EndedAt: ended}); err != nil || ok || q.get(c.ID).Status != callstore.CallCompleted {
		t.Fatalf("settled twice: %v %v", ok, err)
	}
}

// A call cancelled while dialling stays cancelled: progress reports the
// claim lost, settling records the attempt and releases the claim.
func TestCancelledWhileDialling(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	q.add(callstore.CallQueued, 0, 0)
	c, _ := q.claim("w1")
	if _, prev, err := q.CancelCall(ctx, q.org, c.ID, q.now); err != nil || prev != callstore.CallConnecting {
		t.Fatalf("cancel: %s %v", prev, err)
	}
	if got := q.get(c.ID); got.ClaimToken != c.ClaimToken {
		t.Fatal("cancel dropped the claim before the worker hung up")
	}
	if live, err := q.RecordProgress(ctx, c.ID, c.ClaimToken, callstore.Progress{Status: callstore.CallActive, At: q.now}); err != nil || live {
		t.Fatalf("progress after cancel: live %v, %v", live, err)
	}
	live, err := q.RenewLeases(ctx, "w1", q.now.Add(time.Minute))
	if err != nil || live[c.ClaimToken] {
		t.Fatalf("renew lists a cancelled call as live: %v %v", live, err)
	}
	dur := 3.0
	if ok, err := q.FinishAttempt(ctx, c.ID, c.ClaimToken, callstore.Outcome{Status: callstore.CallCancelled, Duration: &dur, EndedAt: q.now}); err != nil || ok {
		t.Fatalf("settle after cancel: %v %v", ok, err)
	}
	got := q.get(c.ID)
	if got.Status != callstore.CallCancelled || got.ClaimToken != "" || got.Duration == nil || *got.Duration != 3 {
		t.Fatalf("cancelled call: %+v", got)
	}
	if as := q.attempts(c.ID); len(as) != 1 || as[0].Status != callstore.CallCancelled {
		t.Fatalf("attempt: %+v", as)
	}
	if _, _, err := q.CancelCall(ctx, q.org, c.ID, q.now); !errors.Is(err, callstore.ErrCallFinished) {
		t.Fatalf("cancel twice: %v", err)
	}
}

// A retry sends the call back to scheduled for its next attempt; the next
// claim is attempt 2.
func TestFinishWithRetry(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	q.add(callstore.CallQueued, 0, 0)
	c, _ := q.claim("w1")
	retry := q.now.Add(10 * time.Minute)
	if ok, err := q.FinishAttempt(ctx, c.ID, c.ClaimToken, callstore.Outcome{Status: callstore.CallBusy, SIPCode: 486, EndedAt: q.now, RetryAt: &retry}); err != nil || !ok {
		t.Fatalf("settle: %v %v", ok, err)
	}
	got := q.get(c.ID)
	if got.Status != callstore.CallScheduled || !got.DueAt.Equal(retry) || got.LastOutcome != callstore.CallBusy || got.Attempts != 1 || got.ClaimToken != "" {
		t.Fatalf("retried call: %+v", got)
	}
	q.now = retry
	if n, err := q.PromoteDueCalls(ctx, q.now); err != nil || n != 1 {
		t.Fatalf("promote: %d %v", n, err)
	}
	c2, ok := q.claim("w2")
	if !ok || c2.ID != c.ID || c2.Attempts != 2 {
		t.Fatalf("second claim: %+v %v", c2, ok)
	}
	if as := q.attempts(c.ID); len(as) != 2 || as[0].Status != callstore.CallBusy || as[1].Status != callstore.CallConnecting {
		t.Fatalf("attempts: %+v", as)
	}
}

// A refused dial gives the attempt back without spending it.
func TestRequeueAttempt(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	ids := q.add(callstore.CallQueued, 0, 0, 1)
	c, _ := q.claim("w1")
	due := q.now.Add(5 * time.Second)
	if err := q.RequeueAttempt(ctx, c.ID, c.ClaimToken, due); err != nil {
		t.Fatal(err)
	}
	got := q.get(c.ID)
	if got.Status != callstore.CallQueued || got.Attempts != 0 || !got.DueAt.Equal(due) || got.ClaimToken != "" || len(q.attempts(c.ID)) != 0 {
		t.Fatalf("requeued: %+v, attempts %+v", got, q.attempts(c.ID))
	}
	// Cancelled meanwhile: it stays cancelled and only loses the claim.
	c2, _ := q.claim("w1")
	if c2.ID != ids[1] {
		t.Fatalf("claimed %s, want the other call (the first is not due)", c2.ID)
	}
	if _, _, err := q.CancelCall(ctx, q.org, c2.ID, q.now); err != nil {
		t.Fatal(err)
	}
	if err := q.RequeueAttempt(ctx, c2.ID, c2.ClaimToken, due); err != nil {
		t.Fatal(err)
	}
	if got := q.get(c2.ID); got.Status != callstore.CallCancelled || got.ClaimToken != "" || got.Attempts != 0 {
		t.Fatalf("cancelled then requeued: %+v", got)
	}
}

// Leases: renewal extends what the worker holds; a claim whose lease ran
// out is listed for recovery and settles only while it is still expired.
func TestLeasesAndExpiredClaims(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	q.add(callstore.CallQueued, 0, 0, 0)
	a, _ := q.claim("w1")
	b, _ := q.claim("w2")
	live, err := q.RenewLeases(ctx, "w1", q.now.Add(time.Hour))
	if err != nil || len(live) != 1 || !live[a.ClaimToken] {
		t.Fatalf("renew w1: %v %v", live, err)
	}
	if got := q.get(a.ID); got.LeaseUntil == nil || !got.LeaseUntil.Equal(q.now.Add(time.Hour)) {
		t.Fatalf("lease of a: %v", got.LeaseUntil)
	}
	// A minute on, w2's 30 s lease has run out, w1's has not.
	later := q.now.Add(time.Minute)
	exp, err := q.ExpiredClaims(ctx, later)
	if err != nil || len(exp) != 1 || exp[0].ID != b.ID {
		t.Fatalf("expired at +1m: %+v %v", exp, err)
	}
	// Settling "if still expired" fails once w2 renewed in between.
	if _, err := q.RenewLeases(ctx, "w2", later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ok, err := q.FinishAttempt(ctx, b.ID, b.ClaimToken, callstore.Outcome{Status: callstore.CallFailed, Reason: "interrupted", EndedAt: later, ExpiredBefore: &later}); err != nil || ok {
		t.Fatalf("settled a renewed claim: %v %v", ok, err)
	}
	if got := q.get(b.ID); got.Status != callstore.CallConnecting || got.ClaimToken != b.ClaimToken {
		t.Fatalf("renewed claim changed: %+v", got)
	}
	// Two minutes on it has expired again and is settled.
	much := later.Add(2 * time.Minute)
	if ok, err := q.FinishAttempt(ctx, b.ID, b.ClaimToken, callstore.Outcome{Status: callstore.CallFailed, Reason: "interrupted", EndedAt: much, ExpiredBefore: &much}); err != nil || !ok {
		t.Fatalf("settle expired: %v %v", ok, err)
	}
	if got := q.get(b.ID); got.Status != callstore.CallFailed || got.FailureReason != "interrupted" {
		t.Fatalf("recovered call: %+v", got)
	}
	// A cancelled call whose worker died is listed too, so its claim is freed.
	if _, _, err := q.CancelCall(ctx, q.org, a.ID, much); err != nil {
		t.Fatal(err)
	}
	if exp, err := q.ExpiredClaims(ctx, q.now.Add(2*time.Hour)); err != nil || len(exp) != 1 || exp[0].ID != a.ID || exp[0].Status != callstore.CallCancelled {
		t.Fatalf("expired after cancel: %+v %v", exp, err)
	}
}

// Two handles on one database, as two processes, share the trunk's dial
// budget: one pace of call starts and one cap on calls at once; a claim
// given back without a dial returns its slot.
func TestDialBudgetSharedByProcesses(t *testing.T) {
	ctx := context.Background()
	q := newQueueDB(t)
	other := storetest.Open(t, q.db.Path())
	q.add(callstore.CallQueued, 0, 5, 5, 5, 5, 5, 5)
	ms := time.Millisecond
	b := &callstore.Budget{Trunk: "sim", Interval: 100 * ms, Lead: 50 * ms, MaxActive: 3}
	t0 := q.now
	claim := func(db *storage.Stores, at time.Duration) callstore.Claimed {
		t.Helper()
		r, err := db.Calls.ClaimCall(ctx, callstore.Claim{Token: fmt.Sprint(time.Now().UnixNano()), WorkerID: "w",
			Dialer: "sim", Now: t0.Add(at), LeaseUntil: t0.Add(at + 30*time.Second), Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	expect := func(r callstore.Claimed, start, next time.Duration) {
		t.Helper()
		if !r.OK || !r.Slot.Start.Equal(t0.Add(start)) || !r.Slot.Next.Equal(t0.Add(next)) {
			t.Fatalf("claim: ok %v slot %v..%v, want +%v..+%v", r.OK, r.Slot.Start.Sub(t0), r.Slot.Next.Sub(t0), start, next)
		}
	}

	expect(claim(q.db, 0), 0, 100*ms)
	if r := claim(other, 0); r.OK || r.Wait != 50*ms {
		t.Fatalf("second process at once: ok %v wait %v, want a 50 ms wait (slot at +100 ms, lead 50 ms)", r.OK, r.Wait)
	}
	r := claim(other, 60*ms) // claimed ahead: it starts at its slot
	expect(r, 100*ms, 200*ms)
	if a := q.attempts(r.Call.ID); len(a) != 1 || !a[0].StartedAt.Equal(t0.Add(100*ms)) {
		t.Fatalf("attempt of a call claimed ahead: %+v, want it started at its slot", a)
	}
	third := claim(q.db, 210*ms) // 10 ms late: the schedule holds
	expect(third, 210*ms, 300*ms)
	if r := claim(other, 300*ms); r.OK || !r.Full {
		t.Fatalf("fourth call with three up: ok %v full %v, want the cap", r.OK, r.Full)
	}
	ok, err := q.UndoClaim(ctx, third.Call.ID, third.Call.ClaimToken, callstore.Undo{Status: callstore.CallFailed, Reason: callstore.ReasonDoNotCall,
		At: t0.Add(220 * ms), Slot: third.Slot})
	if err != nil || !ok {
		t.Fatalf("undo: %v %v", ok, err)
	}
	// The cap has room again, and the slot at +210 ms was given back.
	expect(claim(other, 230*ms), 230*ms, 310*ms)
	// Long idle: the schedule restarts at now, one interval apart (no cap
	// now: three calls are up).
	b.MaxActive = 0
	expect(claim(q.db, 5*time.Second), 5*time.Second, 5*time.Second+100*ms)
}

// The claim must read the queued calls in claim order from an index and
// stop at the first it may take: a sort in its plan makes every claim cost
// as much as the calls that tie on priority and due time (a whole batch).
func TestClaimReadsQueueInOrder(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	pg := db.Postgres()
	q := callstore.ClaimSQL(db.Conn().Dialect())
	args := []any{"tok", "w", int64(1), int64(1), "sim", int64(1), int64(1)}
	explain := "EXPLAIN QUERY PLAN "
	if pg {
		explain = "EXPLAIN (COSTS OFF) "
	}
	// The claim's own transaction, on a table whose statistics say it is
	// empty: the case (a burst of calls before the next ANALYZE) where
	// PostgreSQL's planner would sort.
	tx, err := db.Conn().Reader().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if pg {
		if _, err := tx.ExecContext(ctx, "ANALYZE calls"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, callstore.ClaimPlanPG); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tx.QueryContext(ctx, explain+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var plan []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, strings.TrimSpace(string(toString(vals[len(vals)-1]))))
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "calls_queue") {
		t.Errorf("the claim does not read the calls_queue index:\n%s", text)
	}
	for _, bad := range []string{"TEMP B-TREE FOR ORDER BY", "Sort"} {
		if strings.Contains(text, bad) {
			t.Errorf("the claim sorts (%s):\n%s", bad, text)
		}
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	return ""
}
