package api

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/settings"
)

// BenchmarkBatch1000Compliance: one 1,000-call batch through HTTP in an
// organization with the do-not-call list (1,000,000 numbers listed, 200 of
// the batch's among them) and calling hours on (zones from the numbers'
// area codes, the rest from the default zone) — "on" — and the same batch
// in an organization of the same database with neither — "off": the
// difference is what compliance costs. Target: under 50 ms median.
func BenchmarkBatch1000Compliance(b *testing.B) {
	e := newTestEnv(b, func(c *serveConfig) {
		c.Log = discardLogger()
		c.Calls = calls.Config{Dialer: "sim", Poll: time.Hour}
	})
	ctx := context.Background()
	on := true
	if _, err := e.app.srv.settings.Update(ctx, e.orgID, settings.Patch{CallingHours: &settings.HoursPatch{Enabled: &on}}, time.Now()); err != nil {
		b.Fatal(err)
	}
	nums := make([]string, 0, 50000)
	for lo := 0; lo < 1_000_000; lo += 50000 {
		nums = nums[:0]
		for i := lo; i < lo+50000; i++ {
			nums = append(nums, fmt.Sprintf("+1800%07d", i))
		}
		if _, _, err := e.db.Calls.AddDNC(ctx, e.orgID, nums, "", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	offOrg, offKey := e.newOrg("plain")
	areas := []string{"212", "415", "312", "800", "555"} // New York, Los Angeles, Chicago, listed, no zone
	items := make([]map[string]any, 1000)
	for i := range items {
		items[i] = map[string]any{"contactPhone": fmt.Sprintf("+1%s%07d", areas[i%len(areas)], i), "contactName": fmt.Sprintf("Contact %d", i)}
	}
	body := func(agentID string) []byte {
		// Due tomorrow: the scheduler does not promote (nor the sim dialer
		// dial) calls of earlier iterations while the next one is measured.
		raw, _ := json.Marshal(map[string]any{"agentId": agentID, "name": "bench", "calls": items,
			"defaultScheduledAt": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
			"retryConfig":        map[string]any{"retryIntervals": []map[string]any{{"value": 30, "unit": "minutes"}}}})
		return raw
	}
	onBody, offBody := body(e.voiceAgent(e.orgID).ID), body(e.voiceAgent(offOrg).ID)
	post := func(tb testing.TB, key string, raw []byte, want int) {
		if code, _, resp := e.do("POST", "/api/v1/calls/batch", key, raw); code != want {
			tb.Fatalf("batch: %d %s", code, resp[:min(len(resp), 300)])
		}
	}
	for range 3 { // warm up, and let the seeding's WAL be checkpointed
		post(b, e.key, onBody, 207)
		post(b, offKey, offBody, 201)
	}
	run := func(key string, raw []byte, want int) func(*testing.B) {
		return func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				post(b, key, raw, want)
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
		}
	}
	b.Run("off", run(offKey, offBody, 201))
	b.Run("on", run(e.key, onBody, 207))
}
