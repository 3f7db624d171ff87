package dial

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/callstore"
)

// enableHours turns the organization's calling hours on (08:00-21:00 every
// day, default zone def).
func enableHours(t *testing.T, db *storage.Stores, orgID, def string) {
	t.Helper()
	h := DefaultCallingHours()
	h.Enabled, h.DefaultTimezone = true, def
	b, _ := json.Marshal(h)
	if err := db.Calls.SaveOrgSettings(context.Background(), orgID, callstore.OrgSettings{CallingHours: b}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// Calling hours at dial time, on synctest's clock: calls due at night in
// their recipient's zone are given back and dialled at 08:00 local on the
// next allowed morning, across the spring-forward of New York (March 8,
// 2026) and of Berlin (March 29): 08:00 EDT is 12:00 UTC, 08:00 CEST is
// 06:00 UTC. The zones come from the area code (+1 212), callMetadata, and
// the country code (+49) of the number.
func TestCallingHoursAcrossDST(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db := storetest.Open(t, dbtest.Path(t, "q.db"))
		db.Conn().Listener().Disable() // a synctest bubble: no goroutine may wait on the network
		orgID, agentID := seedAgent(t, db)
		enableHours(t, db, orgID, "Asia/Tokyo")
		t0 := time.Date(2026, 3, 8, 6, 30, 0, 0, time.UTC) // 01:30 EST in New York, 07:30 CET in Berlin
		t1 := time.Date(2026, 3, 28, 21, 30, 0, 0, time.UTC)
		cases := []struct {
			name, phone, meta string
			due, want         time.Time
		}{
			{"New York by area code, before its DST change", "+12125550100", "", t0, time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)},
			{"Berlin by callMetadata, before its DST change", "+12125550101", `{"timezone":"Europe/Berlin"}`, t0, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)},
			{"Berlin by country code, over its DST change", "+493012345678", "", t1, time.Date(2026, 3, 29, 6, 0, 0, 0, time.UTC)},
			{"New York in the evening, allowed at once", "+12125550102", "", t1, t1},
			{"no zone from the number: the default (Tokyo)", "+15550001234", "", t1, time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC)},
		}
		rows := make([]callstore.Call, len(cases))
		for i, c := range cases {
			rows[i] = callstore.Call{OrgID: orgID, AgentID: agentID, Status: callstore.CallInitiated, PhoneNumber: c.phone, DueAt: c.due}
			if c.meta != "" {
				rows[i].CallMetadata = json.RawMessage(c.meta)
			}
		}
		created, err := db.Calls.CreateCalls(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(t0.Add(-time.Hour))) // synctest's clock (starts in 2000): moves the fake time, no wall time passes

		d := &instantDialer{}
		var sched *Scheduler
		q := NewQueue(QueueConfig{DB: deps(db), Dialer: d, CPS: 100, Lease: -1, Poll: 24 * time.Hour,
			OnRetry: func() { sched.Wake() }})
		sched = NewScheduler(deps(db), nil, 24*time.Hour, nil, q.Wake)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{}, 2)
		go func() { q.Run(runCtx); done <- struct{}{} }()
		go func() { sched.Run(runCtx); done <- struct{}{} }()
		time.Sleep(time.Until(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC))) // synctest: the days of fake time the queue dials through
		cancel()
		<-done
		<-done

		for i, c := range cases {
			got, err := db.Calls.GetCall(ctx, orgID, created[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			atts, _ := db.Calls.CallAttempts(ctx, got.ID)
			if got.Status != callstore.CallCompleted || len(atts) != 1 {
				t.Errorf("%s: %s with %d attempts", c.name, got.Status, len(atts))
				continue
			}
			if !atts[0].StartedAt.Equal(c.want) {
				t.Errorf("%s: dialled at %s, want %s", c.name, atts[0].StartedAt.Format(time.RFC3339), c.want.Format(time.RFC3339))
			}
		}
	})
}

// A number listed after the call was queued is not dialled: the check at
// dial time fails it with do_not_call, in its own organization only.
func TestVerdictDoNotCall(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, dbtest.Path(t, "q.db"))
	orgID, agentID := seedAgent(t, db)
	otherOrg, _ := seedAgent(t, db)
	if _, _, err := db.Calls.AddDNC(ctx, orgID, []string{"+14155550100"}, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	q := NewQueue(QueueConfig{DB: deps(db), Dialer: &instantDialer{}})
	now := time.Now()
	c := callstore.Call{ID: "x", OrgID: orgID, AgentID: agentID, PhoneNumber: "+14155550100"}
	if u := q.verdict(ctx, c, now); u == nil || u.Status != callstore.CallFailed || u.Reason != callstore.ReasonDoNotCall {
		t.Fatalf("listed number: %+v", u)
	}
	c.OrgID = otherOrg
	if u := q.verdict(ctx, c, now); u != nil {
		t.Fatalf("another organization's list applied: %+v", u)
	}
}

// A policy stored before retryOnVoicemail existed retries on voicemail.
func TestStoredPolicyRetriesVoicemail(t *testing.T) {
	var p RetryPolicy
	if err := json.Unmarshal([]byte(`{"maxRetries":1,"retryOnNoAnswer":true,"retryOnBusy":true,"retryOnFailed":false}`), &p); err != nil {
		t.Fatal(err)
	}
	if !p.RetryOnVoicemail || !p.ShouldRetry(1, OutcomeVoicemail) {
		t.Fatalf("%+v", p)
	}
	p.RetryOnVoicemail = false
	if p.ShouldRetry(1, OutcomeVoicemail) {
		t.Fatal("retried voicemail with retryOnVoicemail false")
	}
}

// voicemailDialer reports voicemail (as the voice agent would, through the
// result endpoint) on the first attempt of each call, then answers.
type voicemailDialer struct{ db *storage.Stores }

func (d *voicemailDialer) Name() string { return "vm" }

func (d *voicemailDialer) Dial(ctx context.Context, c Call, p func(Progress)) (Result, error) {
	p(Progress{Status: StatusActive})
	if c.Attempt == 1 {
		vm := OutcomeVoicemail
		if err := d.db.Calls.SaveCallResult(ctx, c.OrgID, callstore.CallResult{CallID: c.ID, Outcome: &vm}, time.Now()); err != nil {
			return Result{}, err
		}
	}
	return Result{Status: StatusCompleted, Duration: time.Second}, nil
}

// An attempt the agent reported as voicemail is retried (retryOnVoicemail
// defaults to true) and recorded as voicemail.
func TestVoicemailIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db := storetest.Open(t, dbtest.Path(t, "q.db"))
		db.Conn().Listener().Disable() // a synctest bubble: no goroutine may wait on the network
		orgID, agentID := seedAgent(t, db)
		pol, _ := RetryConfig{RetryIntervals: []RetryInterval{{Value: 10, Unit: "minutes"}}}.Policy()
		polJSON, _ := json.Marshal(pol)
		created, err := db.Calls.CreateCalls(ctx, []callstore.Call{{OrgID: orgID, AgentID: agentID, Status: callstore.CallQueued,
			PhoneNumber: "+14155550100", MaxRetries: 1, RetryPolicy: polJSON}})
		if err != nil {
			t.Fatal(err)
		}
		var sched *Scheduler
		q := NewQueue(QueueConfig{DB: deps(db), Dialer: &voicemailDialer{db}, Lease: -1, Poll: time.Hour, OnRetry: func() { sched.Wake() }})
		sched = NewScheduler(deps(db), nil, time.Hour, nil, q.Wake)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{}, 2)
		go func() { q.Run(runCtx); done <- struct{}{} }()
		go func() { sched.Run(runCtx); done <- struct{}{} }()
		time.Sleep(time.Hour) // synctest: an hour of fake time, no wall time passes
		cancel()
		<-done
		<-done
		c, _ := db.Calls.GetCall(ctx, orgID, created[0].ID)
		atts, _ := db.Calls.CallAttempts(ctx, c.ID)
		if c.Status != callstore.CallCompleted || c.Attempts != 2 || len(atts) != 2 || atts[0].Status != OutcomeVoicemail ||
			atts[1].Status != StatusCompleted || atts[1].StartedAt.Sub(*atts[0].EndedAt) != 10*time.Minute {
			t.Fatalf("call %s attempts %d: %+v", c.Status, c.Attempts, atts)
		}
	})
}
