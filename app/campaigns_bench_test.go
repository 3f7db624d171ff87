package app

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

// BenchmarkBatch1000Compliance: one 1,000-call batch through HTTP with the
// do-not-call list (1,000,000 numbers listed, 200 of the batch's among
// them) and calling hours on (zones from the numbers' area codes, the rest
// from the organization's default), after the same batch with both off:
// the difference is what compliance costs. Target: under 50 ms median.
func BenchmarkBatch1000Compliance(b *testing.B) {
	e := newTestEnv(b, func(c *Config) {
		c.Log = discardLogger()
		c.Calls = calls.Config{Dialer: "sim", Poll: time.Hour}
	})
	ctx := context.Background()
	agent := e.voiceAgent(e.orgID)
	areas := []string{"212", "415", "312", "800", "555"} // New York, Los Angeles, Chicago, listed, no zone
	items := make([]map[string]any, 1000)
	for i := range items {
		items[i] = map[string]any{"contactPhone": fmt.Sprintf("+1%s%07d", areas[i%len(areas)], i), "contactName": fmt.Sprintf("Contact %d", i)}
	}
	raw, _ := json.Marshal(map[string]any{"agentId": agent.ID, "name": "bench", "calls": items,
		"retryConfig": map[string]any{"retryIntervals": []map[string]any{{"value": 30, "unit": "minutes"}}}})
	run := func(b *testing.B, want int) {
		var took []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if code, _, resp := e.do("POST", "/api/v1/calls/batch", e.key, raw); code != want {
				b.Fatalf("batch: %d %s", code, resp[:min(len(resp), 300)])
			}
			took = append(took, time.Since(t0))
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	}
	b.Run("off", func(b *testing.B) { run(b, 201) })
	on := true
	if _, err := settings.Update(ctx, e.db, e.orgID, settings.Patch{CallingHours: &settings.HoursPatch{Enabled: &on}}, time.Now()); err != nil {
		b.Fatal(err)
	}
	nums := make([]string, 0, 50000)
	for lo := 0; lo < 1_000_000; lo += 50000 {
		nums = nums[:0]
		for i := lo; i < lo+50000; i++ {
			nums = append(nums, fmt.Sprintf("+1800%07d", i))
		}
		if _, _, err := e.db.AddDNC(ctx, e.orgID, nums, "", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("on", func(b *testing.B) { run(b, 207) })
}
