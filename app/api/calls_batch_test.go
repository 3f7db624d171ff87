package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/calls"
)

type batchResp struct {
	Data struct {
		Summary struct {
			TotalRequested, Successful, Failed, NotProcessed int
			PartialSuccess, Stopped                          bool
		}
		Results []struct {
			Index        int
			Success      bool
			CallID       string
			Error        string
			ContactPhone string
			ScheduledAt  string
		}
	}
	Error *struct {
		Message string
		Code    int
	}
}

func TestBatchStatuses(t *testing.T) {
	e := newTestEnv(t, fastSim(50*time.Millisecond))
	agent := e.voiceAgent(e.orgID)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var ok batchResp
	code := e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID, "defaultScheduledAt": future,
		"calls": []map[string]any{{"contactPhone": "+1 (415) 555-0100"}, {"contactPhone": "+14155550101", "priority": 0}}}, &ok)
	if code != 201 || ok.Data.Summary.Successful != 2 || ok.Data.Summary.PartialSuccess || ok.Data.Results[0].ContactPhone != "+14155550100" {
		t.Fatalf("all ok: %d %+v", code, ok)
	}
	c := e.getCall(e.key, ok.Data.Results[1].CallID)
	if c.Priority != 0 || c.ScheduledAt == nil {
		t.Errorf("item priority/scheduledAt: %+v", c)
	}

	var part batchResp
	code = e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID,
		"calls": []any{map[string]any{"contactPhone": "+14155550100"}, map[string]any{"contactPhone": "12345"},
			"not an object", map[string]any{"contactPhone": "+14155550102", "priority": "high"},
			map[string]any{"contactPhone": "+14155550103", "timezone": "Mars/Base"}}}, &part)
	s := part.Data.Summary
	if code != 207 || s.Successful != 1 || s.Failed != 4 || !s.PartialSuccess || s.Stopped {
		t.Fatalf("partial: %d %+v", code, part)
	}
	wantErr := []string{"", "contactPhone must be an E.164", "must be an object", "priority: must be an integer", "timezone must be an IANA"}
	for i, r := range part.Data.Results {
		if r.Index != i || r.Success != (i == 0) || !strings.Contains(r.Error, wantErr[i]) {
			t.Errorf("result %d: %+v (want error containing %q)", i, r, wantErr[i])
		}
	}

	var stop batchResp
	code = e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID, "stopOnError": true,
		"calls": []map[string]any{{"contactPhone": "+14155550100"}, {"contactPhone": "bad"}, {"contactPhone": "+14155550101"}}}, &stop)
	if code != 207 || !stop.Data.Summary.Stopped || stop.Data.Summary.Successful != 1 || stop.Data.Summary.Failed != 1 ||
		stop.Data.Summary.NotProcessed != 1 || len(stop.Data.Results) != 2 {
		t.Fatalf("stopOnError: %d %+v", code, stop)
	}

	var all batchResp
	code = e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID,
		"calls": []map[string]any{{"contactPhone": "x"}, {}}}, &all)
	if code != 400 || all.Error == nil || all.Error.Code != 400 || all.Data.Summary.Failed != 2 {
		t.Fatalf("all failed: %d %+v", code, all)
	}
}

func TestBatchTimezoneWindows(t *testing.T) {
	e := newTestEnv(t, fastSim(50*time.Millisecond))
	agent := e.voiceAgent(e.orgID)
	var out batchResp
	code := e.doJSON("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID,
		"timezoneAwareConfig": map[string]any{"enabled": true, "localScheduleTime": "10:30", "excludeWeekends": true,
			"staggering": map[string]any{"enabled": true, "intervalMinutes": 5}},
		"calls": []map[string]any{
			{"contactPhone": "+12125550100", "timezone": "America/New_York"},
			{"contactPhone": "+4930555010", "callMetadata": map[string]any{"timezone": "Europe/Berlin"}},
		}}, &out)
	if code != 201 {
		t.Fatalf("batch: %d %+v", code, out)
	}
	for i, zone := range []string{"America/New_York", "Europe/Berlin"} {
		at, err := time.Parse(time.RFC3339, out.Data.Results[i].ScheduledAt)
		if err != nil {
			t.Fatal(err)
		}
		loc, _ := time.LoadLocation(zone)
		l := at.In(loc)
		if l.Weekday() == time.Saturday || l.Weekday() == time.Sunday || l.Hour() < 10 || (l.Hour() == 10 && l.Minute() < 30) || !at.After(time.Now()) {
			t.Errorf("%s: scheduled %s (local %s)", zone, at, l)
		}
	}
	code, _, body := e.do("POST", "/api/v1/calls/batch", e.key, map[string]any{"agentId": agent.ID,
		"timezoneAwareConfig": map[string]any{"enabled": true, "localScheduleTime": "25:99"},
		"calls":               []map[string]any{{"contactPhone": "+12125550100"}}})
	if code != 400 || !strings.Contains(string(body), "localScheduleTime") {
		t.Fatalf("bad localScheduleTime: %d %s", code, body)
	}
}

// BenchmarkBatch1000Timezone: one 1,000-call batch with a timezone-aware
// configuration, through HTTP (target: under 150 ms median).
func BenchmarkBatch1000Timezone(b *testing.B) {
	e := newTestEnv(b, func(c *serveConfig) {
		c.Log = discardLogger()
		c.Calls = calls.Config{Dialer: "sim", Poll: time.Hour}
	})
	agent := e.voiceAgent(e.orgID)
	zones := []string{"America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe", "America/Los_Angeles"}
	calls := make([]map[string]any, 1000)
	for i := range calls {
		calls[i] = map[string]any{"contactPhone": fmt.Sprintf("+1415%07d", i), "contactName": fmt.Sprintf("Contact %d", i),
			"timezone": zones[i%len(zones)], "callMetadata": map[string]any{"company": "Acme", "tags": []string{"q3"}}}
	}
	body := map[string]any{"agentId": agent.ID, "calls": calls,
		"retryConfig": map[string]any{"retryIntervals": []map[string]any{{"value": 30, "unit": "minutes"}}},
		"timezoneAwareConfig": map[string]any{"enabled": true, "localScheduleTime": "10:00", "respectBusinessHours": true,
			"excludeWeekends": true, "maxCallsPerDay": 400, "staggering": map[string]any{"enabled": true, "intervalMinutes": 1}}}
	for b.Loop() {
		if code, _, resp := e.do("POST", "/api/v1/calls/batch", e.key, body); code != 201 {
			b.Fatalf("batch: %d %s", code, resp[:min(len(resp), 300)])
		}
	}
}
