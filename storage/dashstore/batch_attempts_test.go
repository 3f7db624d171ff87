package dashstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// dialBatch creates a batch of len(at) calls and dials one attempt of each
// at its time, ending it with the outcome given ("" leaves it ringing;
// "voicemail" ends it as a machine answer).
func dialBatch(t *testing.T, db *storage.Stores, org, agent string, at []time.Time, outcomes []string) string {
	t.Helper()
	ctx := context.Background()
	cs := make([]callstore.Call, len(at))
	for i := range cs {
		cs[i] = callstore.Call{OrgID: org, AgentID: agent, Status: callstore.CallQueued,
			PhoneNumber: fmt.Sprintf("+1415555%04d", i), DueAt: at[0].Add(-time.Hour)}
	}
	b, _, err := db.Calls.CreateBatch(ctx, callstore.Batch{OrgID: org, AgentID: agent, Name: "chart"}, cs)
	if err != nil {
		t.Fatal(err)
	}
	for i, now := range at {
		token := fmt.Sprintf("tok-%s-%d", b.ID, i)
		c, ok, err := db.Calls.ClaimNextCall(ctx, callstore.Claim{Token: token, WorkerID: "w", Now: now, LeaseUntil: now.Add(time.Hour)})
		if err != nil || !ok {
			t.Fatalf("claim %d: %v %v", i, ok, err)
		}
		o := callstore.Outcome{Status: outcomes[i], EndedAt: now.Add(30 * time.Second)}
		switch outcomes[i] {
		case "":
			continue
		case "voicemail":
			o.Status, o.Label = callstore.CallCompleted, "voicemail"
		}
		if _, err := db.Calls.FinishAttempt(ctx, c.ID, token, o); err != nil {
			t.Fatal(err)
		}
	}
	return b.ID
}

// A batch's ended attempts are counted by status in buckets sized from its
// span (minutes for 20 minutes, hours for 30 hours); attempts still being
// dialled are left out, and another organization sees nothing.
func TestBatchAttempts(t *testing.T) {
	ctx := context.Background()
	db, org := storetest.WithOrg(t)
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "A", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC)
	m := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	id := dialBatch(t, db, org, a.ID, []time.Time{m(0), m(1), m(1), m(10), m(20), m(25)},
		[]string{"completed", "busy", "no_answer", "completed", "voicemail", ""})
	got, err := db.Dashboard.BatchAttempts(ctx, org, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []dashstore.AttemptCount{{0, "completed", 1}, {1, "busy", 1}, {1, "no_answer", 1}, {10, "completed", 1}, {20, "voicemail", 1}}
	if got.Step != time.Minute || !got.Start.Equal(t0.Truncate(time.Minute)) || got.N != 21 || fmt.Sprint(got.Counts) != fmt.Sprint(want) {
		t.Fatalf("20 minutes: got %+v, want 21 one-minute buckets from %v with %v", got, t0.Truncate(time.Minute), want)
	}

	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	long := dialBatch(t, db, org, a.ID, []time.Time{h(0), h(0), h(30)}, []string{"failed", "failed", "completed"})
	got, err = db.Dashboard.BatchAttempts(ctx, org, long)
	if err != nil {
		t.Fatal(err)
	}
	want = []dashstore.AttemptCount{{0, "failed", 2}, {30, "completed", 1}}
	if got.Step != time.Hour || got.N != 31 || fmt.Sprint(got.Counts) != fmt.Sprint(want) {
		t.Fatalf("30 hours: got %+v, want 31 hourly buckets with %v", got, want)
	}

	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.Dashboard.BatchAttempts(ctx, other.ID, id); err != nil || got.N != 0 || len(got.Counts) != 0 {
		t.Fatalf("another organization reads the batch's attempts: %+v %v", got, err)
	}
}
