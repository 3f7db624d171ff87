package web

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// The call page plays the call's recording when it has one, from the
// organization-scoped API route, and shows no player otherwise.
func TestCallPagePlaysTheRecording(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	a, err := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: owner.orgID, Name: "Ava", Type: "voice", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.Dashboard.SeedHistory(ctx, dashstore.WeekOfCalls(owner.orgID, a.ID, 2, time.Now().UTC())); err != nil {
		t.Fatal(err)
	}
	page, err := e.site.f.Calls.List(ctx, owner.orgID, calls.ListOptions{Limit: 2})
	if err != nil || len(page.Calls) != 2 {
		t.Fatalf("list: %v", err)
	}
	rec, err := recordings.New(recordings.Config{Dir: filepath.Join(t.TempDir(), "recordings")})
	if err != nil {
		t.Fatal(err)
	}
	e.site.f.Recordings = rec
	with, without := page.Calls[0].ID, page.Calls[1].ID
	f, err := rec.Start(owner.orgID, with)
	if err != nil {
		t.Fatal(err)
	}
	f.RecordFrame(make([]int16, 160), nil)
	f.Close()
	_, body, _ := e.get(owner, "/calls/"+with)
	if !strings.Contains(body, `<audio controls preload="none" src="/api/v1/calls/`+with+`/recording"`) {
		t.Fatalf("no player on the page of a recorded call: %.2000s", body)
	}
	if _, body, _ := e.get(owner, "/calls/"+without); strings.Contains(body, "<audio") {
		t.Fatal("a player for a call without a recording")
	}
}
