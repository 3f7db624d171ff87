// Package chart draws the dashboard's charts as server-rendered SVG:
// stacked bars by outcome, with a table of the same figures.
package chart

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/dashboard"
)

// Days is the span of the overview's week: today and the 6 days
// before it, midnight to midnight in the site's zone.
const Days = 7

// Outcomes are the final call statuses the charts stack, in order.
var Outcomes = []string{calls.StatusCompleted, calls.StatusNoAnswer, calls.StatusBusy, calls.StatusFailed, calls.StatusCancelled}

// label is a status as a person reads it.
func label(s string) string { return strings.ReplaceAll(s, "_", " ") }

func itoa(n int) string { return strconv.Itoa(n) }

// Chart geometry (SVG user units; the SVG scales to the page's width).
const (
	chartW, chartH                    = 960.0, 240.0
	padLeft, padRight, padTop, padBot = 44.0, 8.0, 10.0, 28.0
)

// Chart is a server-rendered SVG of stacked bars by outcome.
type Chart struct {
	SVG   template.HTML
	Total int
	Peak  int
}

// Bar is one bar: its calls by outcome, the title a pointer or a screen
// reader gets, and an axis label ("" for none).
type Bar struct {
	counts map[string]int
	title  string
	label  string
}

// Today are the 24 hours of the day starting at midnight, labelled
// every 3 hours; hours after now stay empty.
func Today(hours []dashboard.HourCount, midnight time.Time, loc *time.Location) []Bar {
	bars := make([]Bar, 24)
	for i := range bars {
		t := midnight.Add(time.Duration(i) * time.Hour).In(loc)
		bars[i].title = t.Format("15:00")
		if i%3 == 0 {
			bars[i].label = t.Format("15:00")
		}
	}
	for _, h := range hours {
		i := int(h.Hour.Sub(midnight) / time.Hour)
		if i < 0 || i >= len(bars) {
			continue
		}
		if bars[i].counts == nil {
			bars[i].counts = map[string]int{}
		}
		bars[i].counts[h.Status] += h.N
	}
	return bars
}

// Week are the days from first (a midnight) to today, one bar a day,
// the same days as Daily.
func Week(hours []dashboard.HourCount, first time.Time, loc *time.Location) []Bar {
	bars := make([]Bar, Days)
	index := map[string]int{}
	for i := range bars {
		d := first.AddDate(0, 0, i).In(loc).Format("Mon 2 Jan")
		bars[i] = Bar{title: d, label: d, counts: map[string]int{}}
		index[d] = i
	}
	for _, h := range hours {
		if i, ok := index[h.Hour.In(loc).Format("Mon 2 Jan")]; ok {
			bars[i].counts[h.Status] += h.N
		}
	}
	return bars
}

// Draw draws stacked bars of ended calls split by outcome; every bar
// with calls has a title with its counts.
func Draw(bars []Bar, id, title string) Chart { return DrawStacked(bars, id, title, "calls ended") }

// DrawStacked is Draw for any count: what says what the total counts
// ("calls ended", "dial attempts").
func DrawStacked(bars []Bar, id, title, what string) Chart {
	c := Chart{}
	for _, br := range bars {
		t := 0
		for _, n := range br.counts {
			t += n
		}
		c.Total += t
		c.Peak = max(c.Peak, t)
	}
	top := niceCeil(c.Peak)
	plotW, plotH := chartW-padLeft-padRight, chartH-padTop-padBot
	barW := plotW / float64(len(bars))
	gap := math.Min(barW*0.15, 8)
	y := func(v int) float64 { return padTop + plotH - plotH*float64(v)/float64(top) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-labelledby="%s-title %s-desc" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH, id, id)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`, id, html.EscapeString(title))
	fmt.Fprintf(&b, `<desc id="%s-desc">%d %s; the busiest bar had %d.</desc>`, id, c.Total, html.EscapeString(what), c.Peak)
	for _, v := range []int{0, top / 2, top} {
		fmt.Fprintf(&b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, padLeft, chartW-padRight, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis" x="%g" y="%.1f" text-anchor="end">%d</text>`, padLeft-6, y(v)+4, v)
	}
	for i, br := range bars {
		x := padLeft + float64(i)*barW
		if br.label != "" {
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%g">%s</text>`, x+gap/2, chartH-8, html.EscapeString(br.label))
		}
		if len(br.counts) == 0 {
			continue
		}
		var parts []string
		base := 0
		fmt.Fprint(&b, `<g>`)
		for _, st := range Outcomes {
			n := br.counts[st]
			if n == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, label(st)))
			fmt.Fprintf(&b, `<rect class="bar-%s" x="%.2f" y="%.2f" width="%.2f" height="%.2f"/>`,
				st, x+gap/2, y(base+n), math.Max(barW-gap, 1), y(base)-y(base+n))
			base += n
		}
		if len(parts) == 0 {
			fmt.Fprint(&b, `</g>`)
			continue
		}
		fmt.Fprintf(&b, `<title>%s: %s</title></g>`, html.EscapeString(br.title), html.EscapeString(strings.Join(parts, ", ")))
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

// DayRow is one day's ended calls by outcome, for the table under the chart.
type DayRow struct {
	Day    string
	Counts []int // in the order of Outcomes
	Total  int
}

// Daily are the week's days, newest first: the same days and counts
// as Week.
func Daily(bars []Bar) []DayRow {
	days := make([]DayRow, 0, len(bars))
	for i := len(bars) - 1; i >= 0; i-- {
		d := DayRow{Day: bars[i].title, Counts: make([]int, len(Outcomes))}
		for k, st := range Outcomes {
			d.Counts[k] = bars[i].counts[st]
			d.Total += d.Counts[k]
		}
		days = append(days, d)
	}
	return days
}
