package chart

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/dashboard"
)

// Today's chart stacks each hour's outcomes and titles every bar with its
// counts; the week's chart has a bar a day and its table the same 7 days
// and counts (issue 26: the table had 8 rows against 7 days of hours).
func TestCharts(t *testing.T) {
	first := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	today := first.AddDate(0, 0, 6)
	hours := []dashboard.HourCount{
		{Hour: first.Add(9 * time.Hour), Status: "completed", N: 3},
		{Hour: first.Add(9 * time.Hour), Status: "busy", N: 1},
		{Hour: first.Add(30 * time.Hour), Status: "failed", N: 7},
		{Hour: today.Add(14 * time.Hour), Status: "completed", N: 40},
		{Hour: today.Add(15 * time.Hour), Status: "no_answer", N: 2},
		{Hour: first.Add(-time.Hour), Status: "failed", N: 100}, // before the week: ignored
	}
	c := Draw(Today(hours, today, time.UTC), "t", "today")
	svg := string(c.SVG)
	if c.Total != 42 || c.Peak != 40 || strings.Count(svg, "<g>") != 2 {
		t.Fatalf("today: total %d peak %d groups %d", c.Total, c.Peak, strings.Count(svg, "<g>"))
	}
	for _, want := range []string{"14:00: 40 completed", "15:00: 2 no answer", ">50</text>", ">21:00</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("today's chart lacks %q", want)
		}
	}
	week := Week(hours, first, time.UTC)
	w := Draw(week, "w", "week")
	if w.Total != 53 || strings.Count(string(w.SVG), "<g>") != 3 || !strings.Contains(string(w.SVG), "Mon 16 Nov: 3 completed, 1 busy") {
		t.Fatalf("week: total %d %s", w.Total, w.SVG)
	}
	days := Daily(week)
	if len(days) != 7 || days[6].Day != "Mon 16 Nov" || days[0].Day != "Sun 22 Nov" || days[6].Total != 4 || days[5].Counts[3] != 7 || days[0].Total != 42 {
		t.Fatalf("days %+v", days)
	}
	// Across a change of daylight saving time the week is still 7 days.
	paris, _ := time.LoadLocation("Europe/Paris")
	first = time.Date(2026, 10, 22, 0, 0, 0, 0, paris)
	if days := Daily(Week(nil, first, paris)); len(days) != 7 || days[0].Day != "Wed 28 Oct" {
		t.Fatalf("DST week %+v", days)
	}
	for in, want := range map[int]int{0: 2, 2: 2, 3: 5, 7: 10, 11: 20, 99: 100, 101: 200, 450: 500, 5001: 10000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%d) = %d, want %d", in, got, want)
		}
	}
}

// However many buckets, the time axis has at most maxAxisLabels labels, the
// first at the first bar, with the day named once buckets are hours.
func TestAttemptBarsAxis(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		n     int
		step  time.Duration
		first string
	}{{1, time.Minute, "09:00"}, {21, time.Minute, "09:00"}, {48, 5 * time.Minute, "09:00"}, {31, time.Hour, "Mon 09:00"}, {40, 24 * time.Hour, "Mon 2 Mar"}} {
		bars := Attempts(dashboard.AttemptBuckets{Start: start, Step: tc.step, N: tc.n}, time.UTC)
		labels := 0
		for _, b := range bars {
			if b.label != "" {
				labels++
			}
		}
		if len(bars) != tc.n || labels == 0 || labels > maxAxisLabels || bars[0].label != tc.first {
			t.Errorf("%d buckets of %v: %d bars, %d labels, first %q (want %q)", tc.n, tc.step, len(bars), labels, bars[0].label, tc.first)
		}
	}
}
