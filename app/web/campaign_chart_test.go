package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// The campaign page draws its dial attempts over time with the overview's
// chart code: a bar per minute for a 12-minute campaign, each bar's title
// with its counts by outcome (voicemail as no answer), the total in the
// description; a campaign nothing was dialled for has no chart.
func TestCampaignAttemptsChart(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	a, err := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: owner.orgID, Name: "Ava", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC)
	at := []time.Duration{0, time.Minute, time.Minute, time.Minute, 12 * time.Minute}
	ends := []callstore.Outcome{{Status: "completed"}, {Status: "busy"}, {Status: "no_answer"},
		{Status: "completed", Label: "voicemail"}, {Status: "failed"}}
	cs := make([]callstore.Call, len(at)+1)
	for i := range cs {
		cs[i] = callstore.Call{OrgID: owner.orgID, AgentID: a.ID, Status: callstore.CallQueued,
			PhoneNumber: fmt.Sprintf("+1415555%04d", i), DueAt: t0.Add(-time.Hour)}
	}
	b, _, err := e.db.Calls.CreateBatch(ctx, callstore.Batch{OrgID: owner.orgID, AgentID: a.ID, Name: "Spring"}, cs)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := e.get(owner, "/batches/"+b.ID)
	if strings.Contains(body, "attempts-chart") {
		t.Fatal("a chart for a campaign nothing was dialled for")
	}
	for i, d := range at {
		now, token := t0.Add(d), fmt.Sprint("tok", i)
		c, ok, err := e.db.Calls.ClaimNextCall(ctx, callstore.Claim{Token: token, WorkerID: "w", Now: now, LeaseUntil: now.Add(time.Hour)})
		if err != nil || !ok {
			t.Fatalf("claim %d: %v %v", i, ok, err)
		}
		ends[i].EndedAt = now.Add(20 * time.Second)
		if _, err := e.db.Calls.FinishAttempt(ctx, c.ID, token, ends[i]); err != nil {
			t.Fatal(err)
		}
	}
	_, body, _ = e.get(owner, "/batches/"+b.ID)
	for _, want := range []string{
		`<h2 id="attempts">Attempts per minute</h2>`,
		`<desc id="attempts-chart-desc">5 dial attempts; the busiest bar had 3.</desc>`,
		`<title>Mon 2 Mar 09:00: 1 completed</title>`,
		`<title>Mon 2 Mar 09:01: 2 no answer, 1 busy</title>`,
		`<title>Mon 2 Mar 09:12: 1 failed</title>`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("campaign page lacks %q: %.6000s", want, body)
		}
	}
	if n := strings.Count(body, `<rect class="bar-`); n != 4 {
		t.Fatalf("%d bar segments, want 4 (completed; no answer and busy; failed)", n)
	}
}
