package web

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/storage/dashstore"
)

// The chart stacks each hour's outcomes, titles every bar with its counts,
// and scales to a round peak; the daily table sums the same hours.
func TestChart(t *testing.T) {
	from := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	hours := []dashstore.HourCount{
		{Hour: from.Add(9 * time.Hour), Status: "completed", N: 3},
		{Hour: from.Add(9 * time.Hour), Status: "busy", N: 1},
		{Hour: from.Add(30 * time.Hour), Status: "failed", N: 7},
		{Hour: from.Add(-time.Hour), Status: "failed", N: 100}, // outside the week: ignored
	}
	c := buildChart(hours, from, time.UTC)
	svg := string(c.SVG)
	if c.Total != 11 || c.Peak != 7 || strings.Count(svg, "<g>") != 2 {
		t.Fatalf("total %d peak %d groups %d", c.Total, c.Peak, strings.Count(svg, "<g>"))
	}
	for _, want := range []string{"Mon 16 Nov 09:00: 3 completed, 1 busy", "Tue 17 Nov 06:00: 7 failed", `class="bar-busy"`, ">10</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	days := dailyRows(hours, from, time.UTC)
	if len(days) != 7 || days[6].Day != "Mon 16 Nov" || days[6].Total != 4 || days[5].Counts[3] != 7 {
		t.Fatalf("days %+v", days)
	}
	for in, want := range map[int]int{0: 2, 2: 2, 3: 5, 7: 10, 11: 20, 99: 100, 101: 200, 450: 500, 5001: 10000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%d) = %d, want %d", in, got, want)
		}
	}
}
