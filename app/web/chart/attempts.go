package chart

import (
	"time"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/dashboard"
)

// maxAxisLabels keeps the campaign chart's time axis readable at 360 px.
const maxAxisLabels = 6

// Attempts are a batch's attempts, a bar per bucket from the first
// attempt's to the last's, labelled at most maxAxisLabels times. A
// voicemail attempt counts as no answer: no person picked up.
func Attempts(ab dashboard.AttemptBuckets, loc *time.Location) []Bar {
	bars := make([]Bar, ab.N)
	every := (ab.N + maxAxisLabels - 1) / maxAxisLabels
	layout := "15:04"
	switch {
	case ab.Step >= 24*time.Hour:
		layout = "Mon 2 Jan"
	case ab.Step >= time.Hour || ab.N > 0 && ab.Start.In(loc).YearDay() != ab.Start.Add(time.Duration(ab.N)*ab.Step).In(loc).YearDay():
		layout = "Mon 15:04"
	}
	for i := range bars {
		t := ab.Start.Add(time.Duration(i) * ab.Step).In(loc)
		bars[i].title = t.Format("Mon 2 Jan 15:04")
		if i%every == 0 {
			bars[i].label = t.Format(layout)
		}
	}
	for _, c := range ab.Counts {
		if c.Bucket < 0 || c.Bucket >= len(bars) {
			continue
		}
		st := c.Status
		if st == "voicemail" {
			st = calls.StatusNoAnswer
		}
		if bars[c.Bucket].counts == nil {
			bars[c.Bucket].counts = map[string]int{}
		}
		bars[c.Bucket].counts[st] += c.N
	}
	return bars
}

// StepName says a bucket size in words ("5 minutes", "hour").
func StepName(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "minute"
	case d == time.Hour:
		return "hour"
	case d == 24*time.Hour:
		return "day"
	case d == 7*24*time.Hour:
		return "week"
	case d < time.Hour:
		return itoa(int(d/time.Minute)) + " minutes"
	default:
		return itoa(int(d/time.Hour)) + " hours"
	}
}
