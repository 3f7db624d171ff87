package web

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/dashstore"
)

// chartHours is the span of the overview chart: 7 days of hours.
const chartHours = 7 * 24

// Chart geometry (SVG user units; the SVG scales to the page's width).
const (
	chartW, chartH                    = 960.0, 260.0
	padLeft, padRight, padTop, padBot = 44.0, 8.0, 10.0, 28.0
)

// chart is the server-rendered SVG of calls per hour by outcome.
type chart struct {
	SVG   template.HTML
	Total int
	Peak  int
}

// buildChart draws stacked bars, one per hour from from (an hour start),
// each split by outcome; every bar has a title with its counts, so a
// pointer or a screen reader gets the numbers.
func buildChart(hours []dashstore.HourCount, from time.Time, loc *time.Location) chart {
	counts := make([]map[string]int, chartHours)
	for _, h := range hours {
		i := int(h.Hour.Sub(from) / time.Hour)
		if i < 0 || i >= chartHours {
			continue
		}
		if counts[i] == nil {
			counts[i] = map[string]int{}
		}
		counts[i][h.Status] += h.N
	}
	c := chart{}
	for _, m := range counts {
		t := 0
		for _, n := range m {
			t += n
		}
		c.Total += t
		c.Peak = max(c.Peak, t)
	}
	top := niceCeil(c.Peak)
	plotW, plotH := chartW-padLeft-padRight, chartH-padTop-padBot
	barW := plotW / chartHours
	y := func(v int) float64 { return padTop + plotH - plotH*float64(v)/float64(top) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH)
	fmt.Fprintf(&b, `<title id="chart-title">Calls per hour over the last 7 days, by outcome</title>`)
	fmt.Fprintf(&b, `<desc id="chart-desc">%d calls ended in the last 7 days; the busiest hour had %d.</desc>`, c.Total, c.Peak)
	for _, v := range []int{0, top / 2, top} {
		fmt.Fprintf(&b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, padLeft, chartW-padRight, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis" x="%g" y="%.1f" text-anchor="end">%d</text>`, padLeft-6, y(v)+4, v)
	}
	for i := 0; i < chartHours; i++ {
		t := from.Add(time.Duration(i) * time.Hour).In(loc)
		x := padLeft + float64(i)*barW
		if t.Hour() == 0 {
			fmt.Fprintf(&b, `<line class="day" x1="%.1f" x2="%.1f" y1="%g" y2="%g"/>`, x, x, padTop, chartH-padBot+4)
			if x+70 < chartW { // a label that would be cut at the right edge is left out
				fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%g">%s</text>`, x+3, chartH-8, html.EscapeString(t.Format("Mon 2 Jan")))
			}
		}
		m := counts[i]
		if len(m) == 0 {
			continue
		}
		var parts []string
		base := 0
		fmt.Fprint(&b, `<g>`)
		for _, st := range outcomes {
			n := m[st]
			if n == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, label(st)))
			fmt.Fprintf(&b, `<rect class="bar-%s" x="%.2f" y="%.2f" width="%.2f" height="%.2f"/>`,
				st, x+0.5, y(base+n), math.Max(barW-1, 1), y(base)-y(base+n))
			base += n
		}
		fmt.Fprintf(&b, `<title>%s: %s</title></g>`, html.EscapeString(t.Format("Mon 2 Jan 15:00")), html.EscapeString(strings.Join(parts, ", ")))
	}
	b.WriteString(`</svg>`)
	c.SVG = template.HTML(b.String()) // numbers, fixed names and escaped labels only
	return c
}

// niceCeil rounds a peak up to 1, 2 or 5 times a power of ten (at least 2,
// so the middle grid line is a whole number).
func niceCeil(v int) int {
	if v <= 2 {
		return 2
	}
	p := 1
	for p*10 < v {
		p *= 10
	}
	for _, m := range []int{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// dayRow is one day's ended calls by outcome, for the table under the chart.
type dayRow struct {
	Day    string
	Counts []int // in the order of outcomes
	Total  int
}

// dailyRows sums the hours into the zone's days, newest first.
func dailyRows(hours []dashstore.HourCount, from time.Time, loc *time.Location) []dayRow {
	var days []dayRow
	index := map[string]int{}
	for i := 0; i < chartHours; i++ {
		d := from.Add(time.Duration(i) * time.Hour).In(loc).Format("Mon 2 Jan")
		if _, ok := index[d]; !ok {
			index[d] = len(days)
			days = append(days, dayRow{Day: d, Counts: make([]int, len(outcomes))})
		}
	}
	for _, h := range hours {
		i, ok := index[h.Hour.In(loc).Format("Mon 2 Jan")]
		if !ok {
			continue
		}
		for k, st := range outcomes {
			if st == h.Status {
				days[i].Counts[k] += h.N
				days[i].Total += h.N
			}
		}
	}
	for i, j := 0, len(days)-1; i < j; i, j = i+1, j-1 {
		days[i], days[j] = days[j], days[i]
	}
	return days
}
