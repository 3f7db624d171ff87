package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/settings"
	"github.com/agentd/agentd/internal/errs"
)

// The do-not-call list and the calling hours: the compliance pages.

const dncPerPage = 50

type dncData struct {
	Page   dnc.Page
	Search string
	Pager  pager
	// Problems are the lines of an imported file that held no number.
	Problems []dnc.Problem
}

func (s *Site) dncPage(w http.ResponseWriter, r *http.Request, u user) error {
	return s.renderDNC(w, r, u, http.StatusOK, "", "", nil)
}

// renderDNC shows the list with an error or a notice, and the lines of an
// imported file that held no number.
func (s *Site) renderDNC(w http.ResponseWriter, r *http.Request, u user, status int, msg, notice string, problems []dnc.Problem) error {
	offset := pageParams(r)
	search := strings.TrimSpace(r.URL.Query().Get("q"))
	p, err := s.f.DNC.List(r.Context(), u.OrgID, dnc.ListOptions{PhoneNumber: search, Limit: dncPerPage, Offset: offset})
	var e *errs.Error
	if asErr(err, &e) && e.Kind == errs.Invalid {
		msg, status = e.Message, http.StatusBadRequest
	} else if err != nil {
		return err
	}
	d := dncData{Page: p, Search: search, Problems: problems,
		Pager: newPager(r, offset, dncPerPage, len(p.Numbers), p.Pagination.Total, false)}
	s.render(w, r, status, "dnc", page{Title: "Do not call", Nav: "dnc", User: u, Error: msg, Notice: notice, Data: d})
	return nil
}

// splitNumbers reads numbers typed one per line or separated by commas.
func splitNumbers(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' || r == ';' || r == '\t' })
}

// dncFormError shows a refusal of bad input on the list page.
func (s *Site) dncFormError(w http.ResponseWriter, r *http.Request, u user, err error) error {
	var e *errs.Error
	if !asErr(err, &e) || e.Kind != errs.Invalid {
		return err
	}
	r.URL.RawQuery = ""
	return s.renderDNC(w, r, u, http.StatusBadRequest, e.Message, "", nil)
}

func (s *Site) addDNC(w http.ResponseWriter, r *http.Request, u user) error {
	reason := r.PostFormValue("reason")
	nums := splitNumbers(r.PostFormValue("numbers"))
	if len(nums) == 0 {
		return s.dncFormError(w, r, u, errs.InvalidField("numbers", "give at least one number"))
	}
	a, err := s.f.DNC.Add(r.Context(), u.OrgID, dnc.AddRequest{Numbers: nums, Reason: &reason}, s.cfg.Now())
	if err != nil {
		return s.dncFormError(w, r, u, err)
	}
	redirect(w, r, "/dnc", fmt.Sprintf("%d added, %d already listed; %d waiting calls failed", a.Added, a.AlreadyListed, a.CallsFailed))
	return nil
}

func (s *Site) removeDNC(w http.ResponseWriter, r *http.Request, u user) error {
	nums := splitNumbers(r.PostFormValue("numbers"))
	if len(nums) == 0 {
		return s.dncFormError(w, r, u, errs.InvalidField("numbers", "give at least one number"))
	}
	rm, err := s.f.DNC.Remove(r.Context(), u.OrgID, dnc.RemoveRequest{Numbers: nums})
	if err != nil {
		return s.dncFormError(w, r, u, err)
	}
	redirect(w, r, "/dnc", fmt.Sprintf("%d removed, %d were not listed", rm.Removed, rm.NotListed))
	return nil
}

// importDNC lists the numbers of an uploaded file (the CLI's format: one
// number a line, or CSV with a phone column); lines without a number are
// listed back and nothing of them is written.
func (s *Site) importDNC(w http.ResponseWriter, r *http.Request, u user) error {
	f, _, err := r.FormFile("file")
	if err != nil {
		return s.dncFormError(w, r, u, errs.InvalidField("file", "choose a file to import"))
	}
	defer f.Close()
	lines, problems, err := dnc.Read(f)
	if err != nil {
		return s.dncFormError(w, r, u, errs.Wrap(errs.Invalid, "the file could not be read", err))
	}
	if len(lines) == 0 {
		r.URL.RawQuery = ""
		return s.renderDNC(w, r, u, http.StatusBadRequest, "the file holds no valid number", "", problems)
	}
	a, err := s.f.DNC.Import(r.Context(), u.OrgID, lines, r.PostFormValue("reason"), nil)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Imported: %d added, %d already listed, %d lines without a number; %d waiting calls failed",
		a.Added, a.AlreadyListed, len(problems), a.CallsFailed)
	if len(problems) > 0 {
		r.URL.RawQuery = ""
		return s.renderDNC(w, r, u, http.StatusOK, "", msg, problems)
	}
	redirect(w, r, "/dnc", msg)
	return nil
}

// weekdays are the calling-hours days, 0 = Sunday as dial.CallingHours counts.
var weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

type settingsData struct {
	Hours settings.CallingHours
	Days  []dayChoice
	Saved string
}

type dayChoice struct {
	N       int
	Name    string
	Checked bool
}

func (s *Site) settingsPage(w http.ResponseWriter, r *http.Request, u user) error {
	st, err := s.f.Settings.Get(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	s.renderSettings(w, r, u, http.StatusOK, st.CallingHours, deref(st.UpdatedAt), "")
	return nil
}

func (s *Site) renderSettings(w http.ResponseWriter, r *http.Request, u user, status int, h settings.CallingHours, saved, msg string) {
	d := settingsData{Hours: h, Saved: saved}
	for i, n := range weekdays {
		c := dayChoice{N: i, Name: n}
		for _, x := range h.Days {
			c.Checked = c.Checked || x == i
		}
		d.Days = append(d.Days, c)
	}
	s.render(w, r, status, "settings", page{Title: "Calling hours", Nav: "settings", User: u, Error: msg, Data: d})
}

func (s *Site) saveSettings(w http.ResponseWriter, r *http.Request, u user) error {
	enabled := r.PostFormValue("enabled") == "on"
	start, end, tz := strings.TrimSpace(r.PostFormValue("start")), strings.TrimSpace(r.PostFormValue("end")), strings.TrimSpace(r.PostFormValue("timezone"))
	days := []int{}
	for _, v := range r.PostForm["days"] {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 6 {
			return errs.InvalidField("callingHours.days", "days are 0 (Sunday) to 6")
		}
		days = append(days, n)
	}
	p := settings.Patch{CallingHours: &settings.HoursPatch{Enabled: &enabled, Start: &start, End: &end, Days: &days, DefaultTimezone: &tz}}
	if _, err := s.f.Settings.Update(r.Context(), u.OrgID, p, s.cfg.Now()); err != nil {
		var e *errs.Error
		if !asErr(err, &e) || e.Kind != errs.Invalid {
			return err
		}
		s.renderSettings(w, r, u, http.StatusBadRequest, settings.CallingHours{Enabled: enabled, Start: start, End: end, Days: days, DefaultTimezone: tz}, "", e.Message)
		return nil
	}
	redirect(w, r, "/settings", "Calling hours saved")
	return nil
}
