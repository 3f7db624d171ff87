package web

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/dashboard"
	"github.com/agentd/agentd/internal/errs"
)

// callStatuses are the statuses the calls filter offers.
var callStatuses = []string{"queued", "scheduled", "initiated", "connecting", "ringing", "active",
	"completed", "no_answer", "busy", "failed", "cancelled"}

const callsPerPage = 50

// callFilter is the calls page's filter as the form shows it.
type callFilter struct {
	Status, Agent, Direction, Batch, From, To string
}

type callsData struct {
	Filter   callFilter
	Calls    []calls.Record
	Pager    pager
	Agents   []agents.Agent
	Statuses []string
	Filtered bool
}

func (s *Site) callsPage(w http.ResponseWriter, r *http.Request, u user) error {
	q := r.URL.Query()
	f := callFilter{Status: q.Get("status"), Agent: q.Get("agent"), Direction: q.Get("direction"),
		Batch: strings.TrimSpace(q.Get("batch")), From: q.Get("from"), To: q.Get("to")}
	offset := pageParams(r)
	o := calls.ListOptions{AgentID: f.Agent, Direction: f.Direction, BatchID: f.Batch, Limit: callsPerPage, Offset: offset}
	if f.Status != "" {
		o.Statuses = []string{f.Status}
	}
	var bad error
	o.From, o.To, bad = s.dayRange(f.From, f.To)
	ags, err := s.f.Agents.Pick(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	d := callsData{Filter: f, Agents: ags, Statuses: callStatuses, Filtered: f != callFilter{}}
	p := page{Title: "Calls", Nav: "calls", User: u, Data: &d}
	status := http.StatusOK
	var res calls.Page
	if bad == nil {
		res, bad = s.f.Calls.List(r.Context(), u.OrgID, o)
	}
	if bad != nil {
		if errs.KindOf(bad) != errs.Invalid {
			return bad
		}
		p.Error, status = bad.(*errs.Error).Message, http.StatusBadRequest
	}
	d.Calls = res.Calls
	d.Pager = newPager(r, offset, callsPerPage, len(res.Calls), res.Pagination.Total, false)
	s.render(w, r, status, "calls", p)
	return nil
}

// day parses a date of the date inputs as the start of that day in the
// site's zone.
func (s *Site) day(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("2006-01-02", v, s.cfg.Location)
	return t, err == nil
}

// dayRange is the from and to days of a list filter (the calls and
// conversations pages): to runs to the end of its day. A day that does not
// parse is bad input naming its field (to's, when both fail); the other
// still applies.
func (s *Site) dayRange(from, to string) (start, end *time.Time, bad error) {
	if t, ok := s.day(from); ok {
		start = &t
	} else if from != "" {
		bad = errs.InvalidField("from", "must be a date (YYYY-MM-DD)")
	}
	if t, ok := s.day(to); ok {
		e := t.AddDate(0, 0, 1).Add(-time.Millisecond)
		end = &e
	} else if to != "" {
		bad = errs.InvalidField("to", "must be a date (YYYY-MM-DD)")
	}
	return start, end, bad
}

// timelineEntry is one moment in a call's life.
type timelineEntry struct {
	At    time.Time
	What  string
	Class string
}

type callData struct {
	Call       calls.Record
	Final      bool
	Timeline   []timelineEntry
	Transcript []calls.TranscriptItem
	Analysis   *analysis.View // nil when the call was never queued for analysis
	Recording  bool           // the call has a recording (a player is shown)
}

func (s *Site) callPage(w http.ResponseWriter, r *http.Request, u user) error {
	c, err := s.f.Calls.Get(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	d := callData{Call: c, Final: calls.Final(c.Status), Timeline: timeline(c), Recording: s.f.Recordings.Has(u.OrgID, c.ID)}
	if c.ResultView != nil && len(c.Transcript) > 0 {
		_ = json.Unmarshal(c.Transcript, &d.Transcript) // validated when stored; null stays empty
	}
	if s.f.Analysis != nil {
		if v, err := s.f.Analysis.Get(r.Context(), u.OrgID, "call", c.ID); err == nil {
			d.Analysis = &v
		}
	}
	s.render(w, r, http.StatusOK, "call", page{Title: "Call " + c.PhoneNumber, Nav: "calls", User: u, Data: d})
	return nil
}

// timeline orders what happened to a call: creation, the schedule, each
// attempt's start and end, the answer, the end and the agent's result.
func timeline(c calls.Record) []timelineEntry {
	var out []timelineEntry
	add := func(at *string, what, class string) {
		if at == nil {
			return
		}
		t, err := time.Parse(time.RFC3339Nano, *at)
		if err == nil {
			out = append(out, timelineEntry{t, what, class})
		}
	}
	add(&c.CreatedAt, "created ("+c.Direction+")", "")
	add(c.ScheduledAt, "scheduled for", "")
	for _, a := range c.AttemptHistory {
		n := "attempt " + itoa(a.Attempt)
		add(&a.StartedAt, n+" dialled", "")
		what := n + " ended: " + label(a.Status)
		if a.FailureReason != nil {
			what += " (" + *a.FailureReason + ")"
		}
		add(a.EndedAt, what, "st-"+a.Status)
	}
	add(c.AnsweredAt, "answered", "st-active")
	if c.Status != calls.StatusCompleted || len(c.AttemptHistory) == 0 {
		add(c.EndedAt, "ended: "+label(c.Status), "st-"+c.Status)
	}
	if c.NextAttemptAt != nil && !calls.Final(c.Status) {
		add(c.NextAttemptAt, "next attempt due", "")
	}
	if c.ResultView != nil {
		add(c.ResultUpdatedAt, "agent reported its result", "")
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

func (s *Site) cancelCall(w http.ResponseWriter, r *http.Request, u user) error {
	_, msg, err := s.f.Calls.Cancel(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	redirect(w, r, "/calls/"+r.PathValue("id"), msg)
	return nil
}

const batchesPerPage = 20

type batchesData struct {
	Batches []dashboard.BatchProgress
	Pager   pager
	Order   []string
	Names   map[string]string // batch id -> campaign name
}

func (s *Site) batchesPage(w http.ResponseWriter, r *http.Request, u user) error {
	offset := pageParams(r)
	bs, total, err := s.f.Dashboard.Batches(r.Context(), u.OrgID, batchesPerPage, offset)
	if err != nil {
		return err
	}
	d := batchesData{Batches: bs, Pager: newPager(r, offset, batchesPerPage, len(bs), total, false), Order: callStatuses,
		Names: map[string]string{}}
	// Campaign names, newest first as the page lists them.
	if named, err := s.f.Calls.ListBatches(r.Context(), u.OrgID, calls.BatchListOptions{Limit: 100, Offset: offset}); err == nil {
		for _, b := range named.Batches {
			d.Names[b.ID] = b.Name
		}
	}
	s.render(w, r, http.StatusOK, "batches", page{Title: "Batches", Nav: "batches", User: u, Data: d})
	return nil
}
