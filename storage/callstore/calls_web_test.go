package callstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// Web calls: recorded active with direction web, ended once with their
// duration, summed for the day's voice minutes (the running one until
// now), and a session left active by a stopped process is failed at its
// maximum duration.
func TestWebCalls(t *testing.T) {
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "A", Type: "chat", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	c1, err := db.Calls.StartWebCall(ctx, callstore.Call{OrgID: org, AgentID: a.ID, PhoneNumber: "browser"}, day.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Calls.EndWebCall(ctx, c1.ID, callstore.CallCompleted, "", day.Add(time.Hour+90*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Ending again changes nothing.
	if err := db.Calls.EndWebCall(ctx, c1.ID, callstore.CallFailed, "late", day.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := db.Calls.GetCall(ctx, org, c1.ID)
	if err != nil || got.Direction != "web" || got.Status != callstore.CallCompleted || got.Duration == nil || *got.Duration != 90 {
		t.Fatalf("web call: %+v %v", got, err)
	}
	if _, err := db.Calls.StartWebCall(ctx, callstore.Call{OrgID: org, AgentID: a.ID, PhoneNumber: "browser"}, day.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	s, err := db.Calls.WebSeconds(ctx, a.ID, day, day.Add(2*time.Hour+30*time.Second))
	if err != nil || s != 120 {
		t.Fatalf("web seconds: %v %v, want 120", s, err)
	}
	if s, _ := db.Calls.WebSeconds(ctx, a.ID, day.Add(24*time.Hour), day.Add(25*time.Hour)); s != 0 {
		t.Fatalf("next day's seconds: %v", s)
	}
	n, err := db.Calls.EndStaleWebCalls(ctx, day.Add(3*time.Hour), 15*time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("stale: %d %v", n, err)
	}
	if s, _ := db.Calls.WebSeconds(ctx, a.ID, day, day.Add(5*time.Hour)); s != 90+15*60 {
		t.Fatalf("web seconds after the stale one ended: %v", s)
	}
}
