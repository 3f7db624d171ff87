package web

import (
	"net/http"
	"time"

	"github.com/agentd/agentd/app/web/chart"
)

// outcomeCount is one outcome's count for a template.
type outcomeCount struct {
	Status string
	N      int
}

type overviewData struct {
	Today      []outcomeCount
	Ended      int
	Answered   int
	Dialled    int // ended calls that were dialled (all but cancelled ones)
	Queued     int
	Scheduled  int
	Active     int
	KBBacklog  int
	Chart      chart.Chart // the week, a bar a day
	TodayChart chart.Chart // today, a bar an hour
	Days       []chart.DayRow
	Outcomes   []string
	ZoneName   string
	ServerTime time.Duration
}

func (s *Site) overview(w http.ResponseWriter, r *http.Request, u user) error {
	start := time.Now()
	ctx := r.Context()
	loc := s.cfg.Location
	now := s.cfg.Now().In(loc)
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	// One read covers both charts: the week's days from midnight 6 days
	// ago, today's hours among them.
	first := midnight.AddDate(0, 0, -(chart.Days - 1))
	o, err := s.f.Dashboard.Overview(ctx, u.OrgID, midnight, first, now)
	if err != nil {
		return err
	}
	ov, hours := o.Calls, o.Hours
	d := overviewData{Ended: ov.Ended(), Answered: ov.Answered, Dialled: o.Dialled, Queued: ov.Queued, Scheduled: ov.Scheduled,
		Active: ov.Active, KBBacklog: o.KBBacklog, Outcomes: chart.Outcomes, ZoneName: zoneName(now)}
	for _, st := range chart.Outcomes {
		d.Today = append(d.Today, outcomeCount{st, ov.EndedByStatus[st]})
	}
	d.TodayChart = chart.Draw(chart.Today(hours, midnight, loc), "today-chart", "Calls per hour today, by outcome")
	week := chart.Week(hours, first, loc)
	d.Chart = chart.Draw(week, "week-chart", "Calls per day over the last 7 days, by outcome")
	d.Days = chart.Daily(week)
	d.ServerTime = time.Since(start).Round(10 * time.Microsecond)
	s.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", User: u, Data: d})
	return nil
}

// zoneName names the zone times are shown in ("UTC", "CEST").
func zoneName(t time.Time) string {
	name, _ := t.Zone()
	return name
}
