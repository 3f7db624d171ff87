package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/app/dashboard"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// The overview counts the day's calls from the seeded rows (dialled: all
// but the cancelled), its hours sum to the calls ended since first, another
// organization sees none of it, and out-of-order days or a bad page are
// refused. Runs on SQLite, or PostgreSQL with AGENTD_TEST_POSTGRES.
func TestOverview(t *testing.T) {
	ctx := context.Background()
	db, orgID := storetest.WithOrg(t)
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: orgID, Name: "A", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)
	seeded := dashstore.WeekOfCalls(orgID, a.ID, 600, now)
	// Today's calls whatever the hour: two completed, one cancelled.
	at := now.Add(-10 * time.Minute)
	for _, st := range []string{callstore.CallCompleted, callstore.CallCompleted, callstore.CallCancelled} {
		seeded = append(seeded, dashstore.HistoryCall{OrgID: orgID, AgentID: a.ID, Status: st, CreatedAt: at.Add(-time.Minute), EndedAt: &at})
	}
	if err := db.Dashboard.SeedHistory(ctx, seeded); err != nil {
		t.Fatal(err)
	}
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	first := midnight.AddDate(0, 0, -6)
	ended, dialled, inWeek := 0, 0, 0
	for _, c := range seeded {
		if c.EndedAt == nil {
			continue
		}
		if !c.EndedAt.Before(midnight) {
			ended++
			if c.Status != callstore.CallCancelled {
				dialled++
			}
		}
		if !c.EndedAt.Before(first) && c.EndedAt.Before(now.Truncate(time.Hour).Add(time.Hour)) {
			inWeek++
		}
	}
	svc := dashboard.New(dashboard.Deps{Dashboard: db.Dashboard})
	o, err := svc.Overview(ctx, orgID, midnight, first, now)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, h := range o.Hours {
		sum += h.N
	}
	if o.Calls.Ended() != ended || o.Dialled != dialled || sum != inWeek || o.KBBacklog != 0 {
		t.Errorf("overview: ended %d dialled %d week %d backlog %d, want %d %d %d 0",
			o.Calls.Ended(), o.Dialled, sum, o.KBBacklog, ended, dialled, inWeek)
	}
	if ended == 0 || dialled == ended {
		t.Fatalf("the seed has %d calls ended today, %d dialled: the test needs some of each", ended, dialled)
	}
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := svc.Overview(ctx, other.ID, midnight, first, now); err != nil || o.Calls.Ended() != 0 || len(o.Hours) != 0 {
		t.Errorf("another organization's overview: %+v, %v", o, err)
	}
	if _, err := svc.Overview(ctx, orgID, midnight, midnight.Add(time.Hour), now); errs.KindOf(err) != errs.Invalid {
		t.Errorf("first after midnight: %v, want invalid", err)
	}
	if _, _, err := svc.Batches(ctx, orgID, 0, 0); errs.KindOf(err) != errs.Invalid {
		t.Errorf("a page of 0 batches: %v, want invalid", err)
	}
	bs, total, err := svc.Batches(ctx, orgID, 1, 0)
	if err != nil || len(bs) != 1 || total < 1 {
		t.Errorf("batches: %d of %d, %v", len(bs), total, err)
	}
}
