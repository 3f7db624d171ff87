package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/web/chart"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/errs"
)

// Campaigns: a batch of calls started from the dashboard (pasted numbers or
// a CSV upload, dry run first), its own page, and pause, resume, cancel.

// maxContacts is the most numbers one form starts (the API's batch limit).
const maxContacts = 1000

// contact is one line of a pasted list or a CSV file.
type contact struct{ Phone, Name string }

// parseContacts reads "phone[,name]" lines, pasted or from a CSV file. A
// first row whose first cell has no digit is a header and is skipped; so
// are empty lines. A phone column is found by its header name when there
// is one ("phone", "phoneNumber", "contactPhone"), else it is the first.
func parseContacts(r io.Reader) ([]contact, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = false
	phoneCol, nameCol := 0, 1
	var out []contact
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, errs.InvalidField("numbers", "line "+itoa(pe.Line)+": "+pe.Err.Error())
			}
			return nil, errs.InvalidField("numbers", "could not be read")
		}
		if row == 0 && len(rec) > 0 && !strings.ContainsAny(rec[0], "0123456789") {
			for i, h := range rec {
				switch strings.ToLower(strings.TrimSpace(h)) {
				case "phone", "phonenumber", "phone_number", "contactphone", "number":
					phoneCol = i
				case "name", "contactname", "contact_name":
					nameCol = i
				}
			}
			continue
		}
		if len(rec) <= phoneCol || strings.TrimSpace(rec[phoneCol]) == "" {
			continue
		}
		c := contact{Phone: strings.TrimSpace(rec[phoneCol])}
		if nameCol < len(rec) && nameCol != phoneCol {
			c.Name = strings.TrimSpace(rec[nameCol])
		}
		out = append(out, c)
		if len(out) > maxContacts {
			return nil, errs.InvalidField("numbers", "at most "+itoa(maxContacts)+" numbers in one campaign")
		}
	}
	if len(out) == 0 {
		return nil, errs.InvalidField("numbers", "give at least one phone number")
	}
	return out, nil
}

// campaignForm is the new campaign form as typed.
type campaignForm struct {
	Name, AgentID, Numbers string
}

type newCampaignData struct {
	Form   campaignForm
	Agents []agents.Agent
	// Result is the answer to the last dry run (or a start that failed).
	Result *calls.BatchData
	DryRun bool
}

func (s *Site) voiceAgents(r *http.Request, u user) ([]agents.Agent, error) {
	as, err := s.f.Agents.Pick(r.Context(), u.OrgID)
	var voice []agents.Agent
	for _, a := range as {
		if a.Type == "voice" {
			voice = append(voice, a)
		}
	}
	return voice, err
}

func (s *Site) newCampaignPage(w http.ResponseWriter, r *http.Request, u user) error {
	if !u.can("calls:write") {
		return errForbidden(u, "calls:write")
	}
	as, err := s.voiceAgents(r, u)
	if err != nil {
		return err
	}
	d := newCampaignData{Agents: as, Form: campaignForm{AgentID: r.URL.Query().Get("agent")}}
	s.render(w, r, http.StatusOK, "campaign_new", page{Title: "New campaign", Nav: "batches", User: u, Data: d})
	return nil
}

// caller is the calls feature's view of the signed-in user: an owner or
// admin may override calling hours, as their API keys may.
func caller(u user) calls.Caller {
	return calls.Caller{OrgID: u.OrgID, CanOverride: u.Role == "owner" || u.Role == "admin"}
}

// startCampaign dry-runs or starts a batch from the form: the dry run
// shows, per number, the time it would be called or why it would not.
func (s *Site) startCampaign(w http.ResponseWriter, r *http.Request, u user) error {
	f := campaignForm{Name: strings.TrimSpace(r.PostFormValue("name")), AgentID: r.PostFormValue("agentId"),
		Numbers: r.PostFormValue("numbers")}
	dry := r.PostFormValue("dryRun") != ""
	var src io.Reader = strings.NewReader(f.Numbers)
	if file, hdr, err := r.FormFile("file"); err == nil {
		defer file.Close()
		if hdr.Size > 0 {
			src = file
		}
	}
	d := newCampaignData{Form: f, DryRun: dry}
	var err error
	if d.Agents, err = s.voiceAgents(r, u); err != nil {
		return err
	}
	fail := func(err error) error {
		var e *errs.Error
		if !asErr(err, &e) || (e.Kind != errs.Invalid && e.Kind != errs.NotFound && e.Kind != errs.Conflict) {
			return err
		}
		s.render(w, r, s.status(err), "campaign_new", page{Title: "New campaign", Nav: "batches", User: u, Error: e.Message, Data: d})
		return nil
	}
	cs, err := parseContacts(src)
	if err != nil {
		return fail(err)
	}
	req := calls.BatchRequest{AgentID: &f.AgentID, DryRun: dry}
	if f.Name != "" {
		req.Name = &f.Name
	}
	for _, c := range cs {
		item := map[string]string{"contactPhone": c.Phone}
		if c.Name != "" {
			item["contactName"] = c.Name
		}
		b, _ := json.Marshal(item)
		req.Calls = append(req.Calls, b)
	}
	out, err := s.f.Calls.Batch(r.Context(), caller(u), req)
	if err != nil {
		return fail(err)
	}
	if dry || out.Failure != nil {
		d.Result = &out.Data
		msg := ""
		if out.Failure != nil {
			msg = out.Failure.Message
		}
		s.render(w, r, http.StatusOK, "campaign_new", page{Title: "New campaign", Nav: "batches", User: u, Error: msg, Data: d})
		return nil
	}
	redirect(w, r, "/batches/"+out.Data.BatchID, out.Message)
	return nil
}

type campaignData struct {
	Batch    calls.BatchView
	Calls    []calls.Record
	Outcomes []outcomeCount
	Done     int
	Chart    chart.Chart // dial attempts over time, by outcome
	Step     string      // the chart's bucket size in words; "" when nothing was dialled
	Legend   []string
	ZoneName string
	Analysis *analysis.Progress // nil when no call of the batch was analysed
	Fields   []fieldChart
}

// fieldChart is the answers to one enum or boolean field of the batch's
// analyses, most frequent first.
type fieldChart struct {
	Name    string
	Total   int
	Answers []answerCount
}

type answerCount struct {
	Answer string
	N      int
}

// analysisCharts reads the batch's analysis progress and charts its fields.
func (s *Site) analysisCharts(ctx context.Context, orgID, batchID string, d *campaignData) {
	if s.f.Analysis == nil {
		return
	}
	p, err := s.f.Analysis.BatchProgress(ctx, orgID, batchID)
	if err != nil || p.Total == 0 {
		return
	}
	d.Analysis = &p
	for name, answers := range p.Fields {
		fc := fieldChart{Name: name}
		for a, n := range answers {
			fc.Answers = append(fc.Answers, answerCount{a, n})
			fc.Total += n
		}
		sort.Slice(fc.Answers, func(i, j int) bool {
			if fc.Answers[i].N != fc.Answers[j].N {
				return fc.Answers[i].N > fc.Answers[j].N
			}
			return fc.Answers[i].Answer < fc.Answers[j].Answer
		})
		d.Fields = append(d.Fields, fc)
	}
	sort.Slice(d.Fields, func(i, j int) bool { return d.Fields[i].Name < d.Fields[j].Name })
}

func (s *Site) campaignPage(w http.ResponseWriter, r *http.Request, u user) error {
	b, err := s.f.Calls.GetBatch(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	res, err := s.f.Calls.List(r.Context(), u.OrgID, calls.ListOptions{BatchID: b.ID, SortOrder: "asc", Limit: callsPerPage})
	if err != nil {
		return err
	}
	c := b.Counts
	d := campaignData{Batch: b, Calls: res.Calls, Outcomes: []outcomeCount{{"completed", c.Completed}, {"no_answer", c.NoAnswer},
		{"busy", c.Busy}, {"failed", c.Failed}, {"cancelled", c.Cancelled}}}
	for _, o := range d.Outcomes {
		d.Done += o.N
	}
	ab, err := s.f.Dashboard.BatchAttempts(r.Context(), u.OrgID, b.ID)
	if err != nil {
		return err
	}
	if ab.N > 0 {
		d.Step = chart.StepName(ab.Step)
		d.Chart = chart.DrawStacked(chart.Attempts(ab, s.cfg.Location), "attempts-chart",
			"Dial attempts per "+d.Step+", by outcome", "dial attempts")
		d.Legend, d.ZoneName = chart.Outcomes, zoneName(ab.Start.In(s.cfg.Location))
	}
	s.analysisCharts(r.Context(), u.OrgID, b.ID, &d)
	title := b.Name
	if title == "" {
		title = "Batch " + b.ID[:min(8, len(b.ID))]
	}
	s.render(w, r, http.StatusOK, "campaign", page{Title: title, Nav: "batches", User: u, Data: d})
	return nil
}

// pauseCampaign, resumeCampaign and cancelCampaign act on a batch from
// its page.
func (s *Site) pauseCampaign(w http.ResponseWriter, r *http.Request, u user) error {
	b, msg, err := s.f.Calls.PauseBatch(r.Context(), u.OrgID, r.PathValue("id"))
	return s.afterCampaignAction(w, r, b, msg, err)
}

func (s *Site) resumeCampaign(w http.ResponseWriter, r *http.Request, u user) error {
	b, msg, err := s.f.Calls.ResumeBatch(r.Context(), u.OrgID, r.PathValue("id"))
	return s.afterCampaignAction(w, r, b, msg, err)
}

func (s *Site) cancelCampaign(w http.ResponseWriter, r *http.Request, u user) error {
	b, msg, err := s.f.Calls.CancelBatch(r.Context(), u.OrgID, r.PathValue("id"))
	return s.afterCampaignAction(w, r, b, msg, err)
}

func (s *Site) afterCampaignAction(w http.ResponseWriter, r *http.Request, b calls.BatchView, msg string, err error) error {
	if err != nil {
		return err
	}
	redirect(w, r, "/batches/"+b.ID, msg)
	return nil
}

// newCallPage is the form that places one outbound call.
func (s *Site) newCallPage(w http.ResponseWriter, r *http.Request, u user) error {
	if !u.can("calls:write") {
		return errForbidden(u, "calls:write")
	}
	as, err := s.voiceAgents(r, u)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "call_new", page{Title: "New call", Nav: "calls", User: u, Data: map[string]any{"Agents": as}})
	return nil
}

func (s *Site) placeCall(w http.ResponseWriter, r *http.Request, u user) error {
	agent, phone := r.PostFormValue("agentId"), strings.TrimSpace(r.PostFormValue("phoneNumber"))
	q, err := s.f.Calls.Outbound(r.Context(), caller(u), calls.OutboundRequest{AgentID: &agent, PhoneNumber: &phone})
	if err != nil {
		var e *errs.Error
		if !asErr(err, &e) || e.Kind != errs.Invalid {
			return err
		}
		as, _ := s.voiceAgents(r, u)
		s.render(w, r, http.StatusBadRequest, "call_new", page{Title: "New call", Nav: "calls", User: u, Error: e.Message,
			Data: map[string]any{"Agents": as, "AgentID": agent, "Phone": phone}})
		return nil
	}
	redirect(w, r, "/calls/"+q.ID, "Call queued")
	return nil
}
