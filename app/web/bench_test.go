package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// BenchmarkPages is the server time of the dashboard's pages (session check
// included) for an organization with 100,000 calls over a week and 10,000
// knowledge sources, all still waiting for processing:
//
//	go test ./app/web/ -run '^$' -bench Pages -benchtime 20x
func BenchmarkPages(b *testing.B) {
	e := newSiteEnv(b)
	owner := e.org("acme")
	ctx := context.Background()
	a, err := e.db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: owner.orgID, Name: "Ava", Type: "voice", Status: "active"})
	if err != nil {
		b.Fatal(err)
	}
	week := dashstore.WeekOfCalls(owner.orgID, a.ID, 100_000, time.Now().UTC())
	for len(week) > 0 {
		n := min(len(week), 10_000)
		if err := e.db.Dashboard.SeedHistory(ctx, week[:n]); err != nil {
			b.Fatal(err)
		}
		week = week[n:]
	}
	col, err := e.site.f.KB.CreateCollection(ctx, owner.orgID, "docs", "")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10_000; i += 50 {
		in := kb.BatchInput{CollectionID: col.ID}
		for j := i; j < i+50; j++ {
			src, _ := json.Marshal(map[string]string{"externalId": fmt.Sprintf("doc-%05d", j), "title": "Doc",
				"content": fmt.Sprintf("# Doc %d\n\nSome text about topic %d.", j, j)})
			in.Sources = append(in.Sources, src)
		}
		if _, err := e.site.f.KB.UpsertBatch(ctx, owner.orgID, in); err != nil {
			b.Fatal(err)
		}
	}
	page, err := e.site.f.Calls.List(ctx, owner.orgID, calls.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct{ name, path string }{
		{"overview", "/"},
		{"calls", "/calls"},
		{"calls_status", "/calls?status=completed"},
		{"calls_page_100", "/calls?offset=5000"},
		{"calls_agent_dates", "/calls?agent=" + a.ID + "&from=" + time.Now().AddDate(0, 0, -2).Format("2006-01-02")},
		{"calls_batch", "/calls?batch=batch-0042"},
		{"call", "/calls/" + page.Calls[0].ID},
		{"batches", "/batches"},
		{"knowledge", "/knowledge"},
		{"collection", "/knowledge/" + col.ID},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", p.path, nil)
				req.AddCookie(&http.Cookie{Name: SessionCookie, Value: owner.cookie})
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%s: %d", p.path, rec.Code)
				}
			}
		})
	}
}
