package dial

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func planTimes(t *testing.T, now string, cfg BatchConfig, items []PlanItem) []string {
	t.Helper()
	res, err := PlanBatch(ts(t, now), cfg, items)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res))
	for i, p := range res {
		if p.Err != nil {
			out[i] = "error: " + p.Err.Error()
			continue
		}
		if p.At.Location() != time.UTC {
			t.Fatalf("item %d not in UTC", i)
		}
		out[i] = p.At.Format(time.RFC3339)
	}
	return out
}

func sameTimes(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %q", len(got), len(want), got)
	}
	for i := range got {
		if strings.HasPrefix(want[i], "error: ") {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("item %d: got %q, want %q...", i, got[i], want[i])
			}
			continue
		}
		g, err1 := time.Parse(time.RFC3339, got[i])
		w, err2 := time.Parse(time.RFC3339, want[i])
		if err1 != nil || err2 != nil || !g.Equal(w) {
			t.Errorf("item %d: got %s, want %s", i, got[i], want[i])
		}
	}
}

func TestPlanBatchWithoutTimezoneConfig(t *testing.T) {
	cfg := BatchConfig{DefaultScheduledAt: ts(t, "2026-06-11T09:00:00Z")}
	items := []PlanItem{
		{}, // batch default
		{ScheduledAt: ts(t, "2026-06-12T08:30:00+02:00")},      // own time wins
		{ScheduledAt: ts(t, "2026-06-01T00:00:00Z")},           // past: now
		{Timezone: "Asia/Kolkata", LocalScheduleTime: "10:00"}, // ignored without an enabled config
	}
	sameTimes(t, planTimes(t, "2026-06-10T12:00:00Z", cfg, items),
		[]string{"2026-06-11T09:00:00Z", "2026-06-12T06:30:00Z", "2026-06-10T12:00:00Z", "2026-06-11T09:00:00Z"})

	disabled := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: false, LocalScheduleTime: "10:00"}}
	sameTimes(t, planTimes(t, "2026-06-10T12:00:00Z", disabled, items[:1]), []string{"2026-06-10T12:00:00Z"})
}

func TestPlanBatchZonesAndLocalTime(t *testing.T) {
	// now: Wednesday 2026-06-10 12:00Z = 08:00 EDT = 14:00 CEST = 17:30 IST.
	cfg := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "10:00"}}
	items := []PlanItem{
		{Timezone: "America/New_York"},      // 10:00 EDT today = 14:00Z
		{MetadataTimezone: "Europe/Berlin"}, // 10:00 CEST passed, tomorrow 08:00Z
		{},                                  // UTC 10:00 passed, tomorrow 10:00Z
		{Timezone: "Asia/Kolkata", LocalScheduleTime: "13:00"},                  // item time wins: tomorrow 13:00 IST = 07:30Z
		{Timezone: "America/New_York", MetadataTimezone: "Asia/Kolkata"},        // item zone beats metadata zone
		{Timezone: "Europe/Berlin", ScheduledAt: ts(t, "2026-06-20T00:00:00Z")}, // first 10:00 from the 20th on
		{Timezone: "Europe/Berlin", ScheduledAt: ts(t, "2026-06-01T00:00:00Z")}, // past explicit start: from now
		{Timezone: "Mars/Olympus"},
		{MetadataTimezone: "Nowhere/Land"},
		{Timezone: "UTC", LocalScheduleTime: "7pm"},
		{Timezone: "UTC", DoNotCallBefore: "soon"},
		{Timezone: "UTC", DoNotCallAfter: "2026-06-10T11:00:00Z"}, // window closed before now
	}
	sameTimes(t, planTimes(t, "2026-06-10T12:00:00Z", cfg, items), []string{
		"2026-06-10T14:00:00Z",
		"2026-06-11T08:00:00Z",
		"2026-06-11T10:00:00Z",
		"2026-06-11T07:30:00Z",
		"2026-06-10T14:00:00Z",
		"2026-06-20T08:00:00Z",
		"2026-06-11T08:00:00Z",
		"error: timezone: unknown IANA time zone",
		"error: callMetadata.timezone: unknown IANA time zone",
		"error: localScheduleTime: must be HH:mm",
		"error: callMetadata.doNotCallBefore: must be",
		"error: no allowed call time",
	})
	res, _ := PlanBatch(ts(t, "2026-06-10T12:00:00Z"), cfg, items)
	if w := res[0].Window; w.TZ != "America/New_York" || w.LocalScheduleTime != "10:00" {
		t.Fatalf("window to store: %+v", w)
	}
	if !errors.Is(res[11].Err, ErrNoWindow) {
		t.Fatalf("closed window error: %v", res[11].Err)
	}
}

func TestPlanBatchConfigErrors(t *testing.T) {
	cases := []struct {
		cfg   TimezoneAwareConfig
		field string
	}{
		{TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "9:00"}, "timezoneAwareConfig.localScheduleTime"},
		{TimezoneAwareConfig{Enabled: true, RespectBusinessHours: true, BusinessHoursStart: "18:00"}, "timezoneAwareConfig.businessHoursEnd"},
		{TimezoneAwareConfig{Enabled: true, BusinessHoursEnd: "25:00"}, "timezoneAwareConfig.businessHoursEnd"},
		{TimezoneAwareConfig{Enabled: true, AllowedDays: []int{}}, "timezoneAwareConfig.allowedDays"},
		{TimezoneAwareConfig{Enabled: true, AllowedDays: []int{-1}}, "timezoneAwareConfig.allowedDays"},
		{TimezoneAwareConfig{Enabled: true, MaxCallsPerDay: -1}, "timezoneAwareConfig.maxCallsPerDay"},
		{TimezoneAwareConfig{Enabled: true, Staggering: &Staggering{Enabled: true}}, "timezoneAwareConfig.staggering.intervalMinutes"},
		{TimezoneAwareConfig{Enabled: true, Staggering: &Staggering{Enabled: true, IntervalMinutes: -5}}, "timezoneAwareConfig.staggering.intervalMinutes"},
		{TimezoneAwareConfig{Enabled: false, LocalScheduleTime: "noon"}, "timezoneAwareConfig.localScheduleTime"},
	}
	for _, c := range cases {
		_, err := PlanBatch(time.Now(), BatchConfig{TZ: &c.cfg}, []PlanItem{{}})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: got %v, want error on %s", c.cfg, err, c.field)
		}
	}
	ok := TimezoneAwareConfig{Enabled: true, Staggering: &Staggering{Enabled: false}}
	if _, err := PlanBatch(time.Now(), BatchConfig{TZ: &ok}, nil); err != nil {
		t.Fatalf("disabled staggering without interval rejected: %v", err)
	}
}

func TestPlanBatchMaxCallsPerDay(t *testing.T) {
	// now: Thursday 2026-06-11 08:00 EDT. Cap 2 a day, weekdays, 10:00 local.
	cfg := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "10:00", ExcludeWeekends: true, MaxCallsPerDay: 2}}
	items := make([]PlanItem, 5)
	for i := range items {
		items[i].Timezone = "America/New_York"
	}
	sameTimes(t, planTimes(t, "2026-06-11T12:00:00Z", cfg, items), []string{
		"2026-06-11T10:00:00-04:00", "2026-06-11T10:00:00-04:00", // Thursday: two
		"2026-06-12T10:00:00-04:00", "2026-06-12T10:00:00-04:00", // Friday: two
		"2026-06-15T10:00:00-04:00", // weekend skipped: Monday
	})

	// Cap 1 over New York's spring-forward: 02:30 does not exist on Sunday
	// 2026-03-08 (03:30 EDT); the overflow goes to Monday at the asked-for 02:30.
	gap := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "02:30", MaxCallsPerDay: 1}}
	sameTimes(t, planTimes(t, "2026-03-07T12:00:00Z", gap, items[:2]), []string{
		"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00",
	})

	// Days are counted by local date: a Kolkata call and a New York call on
	// the same date share the cap, even though they are hours apart.
	mixed := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "10:00", MaxCallsPerDay: 1}}
	sameTimes(t, planTimes(t, "2026-06-10T00:00:00Z", mixed, []PlanItem{{Timezone: "Asia/Kolkata"}, {Timezone: "America/New_York"}}), []string{
		"2026-06-10T10:00:00+05:30", "2026-06-11T10:00:00-04:00",
	})
}

func TestPlanBatchStaggering(t *testing.T) {
	// 4 calls at 16:30 New York, business hours, 15 minutes apart: 16:30,
	// 16:45, then 17:00 is closed, so Thursday 09:00 and 09:15.
	cfg := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "16:30", RespectBusinessHours: true,
		Staggering: &Staggering{Enabled: true, IntervalMinutes: 15}}}
	items := make([]PlanItem, 4)
	for i := range items {
		items[i].Timezone = "America/New_York"
	}
	sameTimes(t, planTimes(t, "2026-06-10T12:00:00Z", cfg, items), []string{
		"2026-06-10T16:30:00-04:00", "2026-06-10T16:45:00-04:00", "2026-06-11T09:00:00-04:00", "2026-06-11T09:15:00-04:00",
	})

	// A call whose window closes does not hold up the others: now 14:55Z is
	// 16:55 in Berlin (closes 17:00) and 10:55 in New York; 10 minutes apart.
	mixed := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, RespectBusinessHours: true,
		Staggering: &Staggering{Enabled: true, IntervalMinutes: 10}}}
	sameTimes(t, planTimes(t, "2026-06-10T14:55:00Z", mixed, []PlanItem{
		{Timezone: "Europe/Berlin"}, {Timezone: "Europe/Berlin"}, {Timezone: "America/New_York"}, {Timezone: "America/New_York"},
	}), []string{
		"2026-06-10T14:55:00Z",      // Berlin 16:55
		"2026-06-11T09:00:00+02:00", // 15:05Z would be 17:05 Berlin: tomorrow's opening
		"2026-06-10T15:05:00Z",      // New York takes the 15:05Z slot
		"2026-06-10T15:15:00Z",
	})

	// Fractional minutes and the staggered order follows time, then index:
	// item 1 asks for an earlier time than item 0.
	frac := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, Staggering: &Staggering{Enabled: true, IntervalMinutes: 0.5}}}
	sameTimes(t, planTimes(t, "2026-06-10T12:00:00Z", frac, []PlanItem{
		{ScheduledAt: ts(t, "2026-06-10T12:10:00Z")}, {}, {}, {ScheduledAt: ts(t, "2026-06-10T12:10:15Z")},
	}), []string{"2026-06-10T12:10:00Z", "2026-06-10T12:00:00Z", "2026-06-10T12:00:30Z", "2026-06-10T12:10:30Z"})
}

// mixedBatch builds n calls over several zones with varied item settings.
func mixedBatch(n int, seed uint64) []PlanItem {
	zones := []string{"America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe", "America/Los_Angeles", ""}
	rng := rand.New(rand.NewPCG(seed, 1))
	items := make([]PlanItem, n)
	for i := range items {
		it := &items[i]
		z := zones[rng.IntN(len(zones))]
		if rng.IntN(2) == 0 {
			it.Timezone = z
		} else {
			it.MetadataTimezone = z
		}
		switch rng.IntN(6) {
		case 0:
			it.LocalScheduleTime = fmt.Sprintf("%02d:%02d", 8+rng.IntN(10), rng.IntN(60))
		case 1:
			it.DoNotCallBefore = "10:00"
			it.DoNotCallAfter = "15:30:30"
		case 2:
			it.ScheduledAt = time.Date(2026, 6, 10+rng.IntN(5), rng.IntN(24), 0, 0, 0, time.UTC)
		}
	}
	return items
}

// Invariants over a large mixed batch: never before now, every time inside
// the call's window, staggering gaps between consecutive placed calls, and
// the per-day cap.
func TestPlanBatchInvariants(t *testing.T) {
	now := ts(t, "2026-06-10T12:34:56Z")
	for _, cfg := range []TimezoneAwareConfig{
		{Enabled: true, LocalScheduleTime: "09:30", RespectBusinessHours: true, ExcludeWeekends: true, MaxCallsPerDay: 150, Staggering: &Staggering{Enabled: true, IntervalMinutes: 2}},
		{Enabled: true, RespectBusinessHours: true, BusinessHoursStart: "08:00", BusinessHoursEnd: "20:00", AllowedDays: []int{1, 3, 5}, MaxCallsPerDay: 40},
		{Enabled: true, Staggering: &Staggering{Enabled: true, IntervalMinutes: 1.5}},
	} {
		items := mixedBatch(1000, 7)
		res, err := PlanBatch(now, BatchConfig{TZ: &cfg}, items)
		if err != nil {
			t.Fatal(err)
		}
		var times []time.Time
		perDay := map[string]int{}
		for i, p := range res {
			if p.Err != nil {
				t.Fatalf("item %d: %v", i, p.Err)
			}
			if p.At.Before(now) {
				t.Fatalf("item %d before now: %v", i, p.At)
			}
			if next, err := p.Window.Next(p.At); err != nil || !next.Equal(p.At) {
				t.Fatalf("item %d at %v outside its window %+v (next %v, %v)", i, p.At, p.Window, next, err)
			}
			loc, _ := LoadZone(p.Window.TZ)
			perDay[p.At.In(loc).Format("2006-01-02")]++
			times = append(times, p.At)
		}
		if cfg.MaxCallsPerDay > 0 {
			for d, n := range perDay {
				if n > cfg.MaxCallsPerDay {
					t.Fatalf("%d calls on %s, cap %d", n, d, cfg.MaxCallsPerDay)
				}
			}
		}
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		if s := cfg.Staggering; s != nil {
			gap := time.Duration(s.IntervalMinutes * float64(time.Minute))
			for i := 1; i < len(times); i++ {
				if times[i].Sub(times[i-1]) < gap {
					t.Fatalf("calls %v and %v closer than %v", times[i-1], times[i], gap)
				}
			}
		}
	}
}

func BenchmarkPlanBatch1000(b *testing.B) {
	now := time.Date(2026, 6, 10, 12, 34, 56, 0, time.UTC)
	cfg := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "09:30", RespectBusinessHours: true,
		ExcludeWeekends: true, MaxCallsPerDay: 300, Staggering: &Staggering{Enabled: true, IntervalMinutes: 1}}}
	items := mixedBatch(1000, 7)
	for b.Loop() {
		if _, err := PlanBatch(now, cfg, items); err != nil {
			b.Fatal(err)
		}
	}
}

// A tight cap spreads a big batch over many days: one call a day, weekdays,
// 300 calls need 300 weekdays, more than 400 calendar days.
func TestPlanBatchTightCap(t *testing.T) {
	cfg := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "10:00", ExcludeWeekends: true, MaxCallsPerDay: 1}}
	items := make([]PlanItem, 300)
	for i := range items {
		items[i].Timezone = "Europe/Berlin"
	}
	res, err := PlanBatch(ts(t, "2026-06-10T12:00:00Z"), cfg, items)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := LoadZone("Europe/Berlin")
	prev := time.Time{}
	for i, p := range res {
		lt := p.At.In(loc)
		if p.Err != nil || lt.Hour() != 10 || lt.Minute() != 0 || lt.Weekday() == time.Saturday || lt.Weekday() == time.Sunday {
			t.Fatalf("item %d: %v (%v) %v", i, p.At, lt, p.Err)
		}
		// Same time, ties by index: item i goes on the i-th weekday after today.
		if i > 0 && !p.At.After(prev.Add(12*time.Hour)) {
			t.Fatalf("item %d at %v not on a later day than %v", i, lt, prev)
		}
		prev = p.At
	}
	// 2026-06-11 is a Thursday: item 0 on it, item 299 on the 300th weekday
	// (299 weekdays after it: 2027-08-04, a Wednesday, 10:00 CEST).
	if want := ts(t, "2026-06-11T10:00:00+02:00"); !res[0].At.Equal(want) {
		t.Fatalf("item 0 at %v, want %v", res[0].At, want)
	}
	if want := ts(t, "2027-08-04T10:00:00+02:00"); !res[299].At.Equal(want) {
		t.Fatalf("item 299 at %v, want %v", res[299].At.In(loc), want)
	}
}

func BenchmarkPlanBatchTightCap1000(b *testing.B) {
	now := time.Date(2026, 6, 10, 12, 34, 56, 0, time.UTC)
	cfg := BatchConfig{TZ: &TimezoneAwareConfig{Enabled: true, LocalScheduleTime: "10:00", MaxCallsPerDay: 5,
		Staggering: &Staggering{Enabled: true, IntervalMinutes: 1}}}
	items := mixedBatch(1000, 3)
	for b.Loop() {
		if _, err := PlanBatch(now, cfg, items); err != nil {
			b.Fatal(err)
		}
	}
}
