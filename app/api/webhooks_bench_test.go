package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/storage/callstore"
)

// BenchmarkWebhookDeliveries logs 5,000 call events per iteration and
// reports how many deliveries per second reach a local receiver: fan-out,
// lease claims, signing, the HTTP round trip and the recorded results
// (README: target >= 2,000/s on 2 cores).
func BenchmarkWebhookDeliveries(b *testing.B) {
	e := newTestEnv(b, func(c *serveConfig) {
		c.Log = discardLogger()
		c.Calls = calls.Config{Dialer: "none", Poll: time.Hour} // the calls stay queued
		c.Webhooks = events.Config{AllowPrivate: true, Poll: 50 * time.Millisecond}
	})
	var got atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	e.createWebhook(e.key, rc.URL, "*")
	agent := e.voiceAgent(e.orgID)
	const perIter = 5000
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		want := got.Load() + perIter
		for range perIter / 500 {
			calls := make([]callstore.Call, 500)
			for i := range calls {
				calls[i] = callstore.Call{OrgID: e.orgID, AgentID: agent.ID, Status: callstore.CallQueued, PhoneNumber: "+14155550100"}
			}
			if _, err := e.db.Calls.CreateCalls(ctx, calls); err != nil {
				b.Fatal(err)
			}
		}
		// A fine fixed poll, not a backing-off wait: the time to the last
		// delivery is what the benchmark measures.
		if !testkit.WithinEvery(time.Minute, time.Millisecond, func() bool { return got.Load() >= want }) {
			b.Fatalf("%d of %d delivered in a minute", got.Load()-(want-perIter), perIter)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(perIter*b.N)/total.Seconds(), "deliveries/s")
}

// BenchmarkBatch1000Outbox: 1,000-call batches through HTTP with the
// outbox in place and an endpoint subscribed to every event, reporting the
// median latency of the POST (README: target < 50 ms). due=later stores
// calls due tomorrow: the POST alone. due=now sends them due at once, so
// the scheduler promotes each batch while the next is posted: 1,000
// call.queued events rendered in the promoting transaction, fanned out and
// delivered, all competing with the next POST for the writer and the CPU.
func BenchmarkBatch1000Outbox(b *testing.B) {
	for _, due := range []string{"later", "now"} {
		b.Run("due="+due, func(b *testing.B) {
			e := newTestEnv(b, func(c *serveConfig) {
				c.Log = discardLogger()
				c.Calls = calls.Config{Dialer: "sim", Poll: 100 * time.Millisecond}
				c.Webhooks = events.Config{AllowPrivate: true, Poll: 50 * time.Millisecond}
			})
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			defer rc.Close()
			e.createWebhook(e.key, rc.URL, "*")
			agent := e.voiceAgent(e.orgID)
			calls := make([]map[string]any, 1000)
			for i := range calls {
				calls[i] = map[string]any{"contactPhone": fmt.Sprintf("+1415%07d", i), "contactName": fmt.Sprintf("Contact %d", i),
					"callMetadata": map[string]any{"company": "Acme"}}
			}
			body := map[string]any{"agentId": agent.ID, "calls": calls}
			if due == "later" {
				body["defaultScheduledAt"] = time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
			}
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if code, _, resp := e.do("POST", "/api/v1/calls/batch", e.key, body); code != 201 {
					b.Fatalf("batch: %d %s", code, resp[:min(len(resp), 300)])
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
		})
	}
}
