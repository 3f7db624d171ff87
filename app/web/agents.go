package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/internal/errs"
)

const agentsPerPage = 25

// Choices the agent and job forms offer (the agents feature validates them).
var (
	agentTypes      = []string{"voice", "chat"}
	agentStatuses   = []string{"active", "inactive", "training", "deployed"}
	chatPositions   = []string{"bottom-right", "bottom-left", "top-right", "top-left"}
	jobStatuses     = []string{"active", "paused"}
	jobTriggerTypes = []string{"manual", "schedule", "inbound_call", "outbound_campaign", "webhook"}
	jobTrustLevels  = []string{"supervised", "semi_autonomous", "autonomous"}
)

type agentsData struct {
	Agents []agents.Agent
	Type   string
	Pager  pager
}

func (s *Site) agentsPage(w http.ResponseWriter, r *http.Request, u user) error {
	offset := pageParams(r)
	typ := r.URL.Query().Get("type")
	if typ != "voice" && typ != "chat" {
		typ = ""
	}
	as, more, err := s.f.Agents.List(r.Context(), u.OrgID, agents.Query{Type: typ, Limit: agentsPerPage, Offset: offset})
	if err != nil {
		return err
	}
	d := agentsData{Agents: as, Type: typ, Pager: newPager(r, offset, agentsPerPage, len(as), -1, more)}
	s.render(w, r, http.StatusOK, "agents", page{Title: "Agents", Nav: "agents", User: u, Data: d})
	return nil
}

// agentForm is the agent form's fields, as typed.
type agentForm struct {
	ID, Name, Type, Status, Model, Instructions, Phones, Specialty, DisplayRole, Tools string
	// Voice settings.
	Voice, Speed, Interruption, MaxConcurrent string
	CallerIDRotation                          bool
	// Chat settings.
	Theme, PrimaryColor, Position, Greeting, Placeholder, AllowedDomains, MaxPerDay string
	Title                                                                           string
	VoiceEnabled                                                                    bool
}

// agentPageData is the agent form page: the form, and on an existing agent
// its jobs.
type agentPageData struct {
	Form        agentForm
	New         bool
	Jobs        []agents.Job
	Types       []string
	Statuses    []string
	Positions   []string
	JobStatuses []string
	JobTriggers []string
	JobTrust    []string
	ErrorField  string
	CreatedAt   string
	// Widget is the chat agent's snippet and preview (nil otherwise).
	Widget *widgetData
	// Talk shows the Talk control: a voice agent, or a chat agent with
	// voiceEnabled.
	Talk bool
}

func (s *Site) agentPageData(f agentForm, isNew bool) agentPageData {
	return agentPageData{Form: f, New: isNew, Types: agentTypes, Statuses: agentStatuses, Positions: chatPositions,
		JobStatuses: jobStatuses, JobTriggers: jobTriggerTypes, JobTrust: jobTrustLevels}
}

func (s *Site) newAgentPage(w http.ResponseWriter, r *http.Request, u user) error {
	if !u.can("agent:write") {
		return errForbidden(u, "agent:write")
	}
	f := agentForm{Type: "voice", Status: "active"}
	if t := r.URL.Query().Get("type"); t == "chat" {
		f.Type = t
	}
	s.render(w, r, http.StatusOK, "agent", page{Title: "New agent", Nav: "agents", User: u, Data: s.agentPageData(f, true)})
	return nil
}

func (s *Site) agentPage(w http.ResponseWriter, r *http.Request, u user) error {
	a, err := s.f.Agents.Get(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	jobs, err := s.f.Agents.ListJobs(r.Context(), u.OrgID, a.ID)
	if err != nil {
		return err
	}
	d := s.agentPageData(formOf(a), false)
	d.Jobs = jobs
	d.CreatedAt = s.when(a.CreatedAt)
	d.Talk = a.Type == "voice" || (a.Type == "chat" && formOf(a).VoiceEnabled)
	if a.Type == "chat" {
		d.Widget = s.widgetData(r, a)
	}
	s.render(w, r, http.StatusOK, "agent", page{Title: a.Name, Nav: "agents", User: u, Data: d})
	return nil
}

func (s *Site) createAgent(w http.ResponseWriter, r *http.Request, u user) error {
	f := readAgentForm(r)
	in, err := f.input(nil)
	var a agents.Agent
	if err == nil {
		a, err = s.f.Agents.Create(r.Context(), u.OrgID, in)
	}
	if err != nil {
		return s.agentFormError(w, r, u, f, true, err)
	}
	redirect(w, r, "/agents/"+a.ID, "Agent created")
	return nil
}

func (s *Site) updateAgent(w http.ResponseWriter, r *http.Request, u user) error {
	f := readAgentForm(r)
	f.ID = r.PathValue("id")
	// The form's settings go over the stored config as read now, so a key
	// the form does not show (or one set through the API meanwhile) stays.
	a, err := s.f.Agents.Get(r.Context(), u.OrgID, f.ID)
	if err != nil {
		return err
	}
	in, err := f.input(a.Config)
	if err == nil {
		_, err = s.f.Agents.Update(r.Context(), u.OrgID, f.ID, in)
	}
	if err != nil {
		return s.agentFormError(w, r, u, f, false, err)
	}
	redirect(w, r, "/agents/"+f.ID, "Agent saved")
	return nil
}

// agentFormError shows the form again with what was typed and why it was
// refused; other errors go to the error page.
func (s *Site) agentFormError(w http.ResponseWriter, r *http.Request, u user, f agentForm, isNew bool, err error) error {
	var e *errs.Error
	if !asErr(err, &e) || e.Kind != errs.Invalid {
		return err
	}
	d := s.agentPageData(f, isNew)
	d.ErrorField = e.Field
	if !isNew {
		d.Jobs, _ = s.f.Agents.ListJobs(r.Context(), u.OrgID, f.ID)
	}
	s.render(w, r, http.StatusBadRequest, "agent", page{Title: "Agent", Nav: "agents", User: u, Error: e.Message, Data: d})
	return nil
}

func (s *Site) deleteAgent(w http.ResponseWriter, r *http.Request, u user) error {
	a, err := s.f.Agents.Delete(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	redirect(w, r, "/agents", "Agent "+a.Name+" deleted (it stays listed as inactive)")
	return nil
}

func readAgentForm(r *http.Request) agentForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return agentForm{Name: v("name"), Type: v("type"), Status: v("status"), Model: v("model"),
		Instructions: r.PostFormValue("instructions"), Phones: v("phones"), Specialty: v("specialty"),
		DisplayRole: v("displayRole"), Tools: v("tools"), Voice: v("voice"), Speed: v("speed"),
		Interruption: v("interruption"), MaxConcurrent: v("maxConcurrentCalls"), CallerIDRotation: v("callerIdRotation") == "on", Theme: v("theme"), PrimaryColor: v("primaryColor"), Position: v("position"),
		Greeting: v("greeting"), Placeholder: v("placeholder"), AllowedDomains: v("allowedDomains"),
		MaxPerDay: v("maxMessagesPerDay"), Title: v("title"), VoiceEnabled: v("voiceEnabled") == "on"}
}

// formOf fills the form from a stored agent.
func formOf(a agents.Agent) agentForm {
	f := agentForm{ID: a.ID, Name: a.Name, Type: a.Type, Status: a.Status, Model: a.Model, Instructions: a.Instructions,
		Phones: strings.Join(a.PhoneNumbers, "\n"), Specialty: a.Specialty, DisplayRole: a.DisplayRole}
	if t := strings.TrimSpace(string(a.Tools)); t != "" && t != "[]" && t != "null" {
		f.Tools = pretty(a.Tools)
	}
	var cfg map[string]any
	_ = json.Unmarshal(a.Config, &cfg)
	str := func(k string) string {
		switch v := cfg[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		case []any:
			var parts []string
			for _, x := range v {
				if s, ok := x.(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, ", ")
		}
		return ""
	}
	f.Voice, f.Speed, f.Interruption = str("voice"), str("speed"), str("interruptionThreshold")
	f.MaxConcurrent = str("maxConcurrentCalls")
	f.CallerIDRotation, _ = cfg["callerIdRotation"].(bool)
	f.Theme, f.PrimaryColor, f.Position = str("theme"), str("primaryColor"), str("position")
	f.Greeting, f.Placeholder, f.AllowedDomains = str("greeting"), str("placeholder"), str("allowedDomains")
	f.MaxPerDay, f.Title = str("maxMessagesPerDay"), str("title")
	f.VoiceEnabled, _ = cfg["voiceEnabled"].(bool)
	return f
}

// formConfigKeys are the config keys the agent form shows, by agent type.
// Only these are set or removed by a save; every other key of the stored
// config is kept as it is (a form never drops what it does not show).
var formConfigKeys = map[string][]string{
	"voice": {"voice", "speed", "interruptionThreshold", "maxConcurrentCalls", "callerIdRotation"},
	"chat":  {"theme", "primaryColor", "position", "greeting", "placeholder", "title", "allowedDomains", "maxMessagesPerDay", "voiceEnabled"},
}

// input turns the form into the agents feature's input. stored is the
// agent's config as read before the save (nil for a new agent): the form's
// keys of the chosen type replace theirs, the form keys of the other type
// go (the agents feature refuses them on this type), the rest stays.
func (f agentForm) input(stored json.RawMessage) (agents.Input, error) {
	in := agents.Input{Name: &f.Name, Type: &f.Type, Status: &f.Status, Model: &f.Model,
		Instructions: &f.Instructions, Specialty: &f.Specialty, DisplayRole: &f.DisplayRole}
	phones := []string{}
	for _, p := range strings.FieldsFunc(f.Phones, func(r rune) bool { return r == '\n' || r == ',' || r == '\r' }) {
		if p = strings.TrimSpace(p); p != "" {
			phones = append(phones, p)
		}
	}
	in.PhoneNumbers = &phones
	shown, err := f.settings()
	if err != nil {
		return in, err
	}
	cfg, err := mergeConfig(stored, f.Type, shown)
	if err != nil {
		return in, err
	}
	in.Config = cfg
	tools := "[]"
	if f.Tools != "" {
		tools = f.Tools
	}
	if !json.Valid([]byte(tools)) {
		return in, errs.InvalidField("tools", "must be a JSON array of {id, name, description}")
	}
	in.Tools = json.RawMessage(tools)
	return in, nil
}

// settings is what the form's fields of the chosen type say: a key with
// a value is set, a key absent (empty field) is removed from the config.
func (f agentForm) settings() (map[string]any, error) {
	cfg := map[string]any{}
	num := func(key, v string) error {
		if v == "" {
			return nil
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return errs.InvalidField("config."+key, "must be a number")
		}
		cfg[key] = n
		return nil
	}
	set := func(key, v string) {
		if v != "" {
			cfg[key] = v
		}
	}
	switch f.Type {
	case "voice":
		set("voice", f.Voice)
		for _, n := range [][2]string{{"speed", f.Speed}, {"interruptionThreshold", f.Interruption}, {"maxConcurrentCalls", f.MaxConcurrent}} {
			if err := num(n[0], n[1]); err != nil {
				return nil, err
			}
		}
		if f.CallerIDRotation {
			cfg["callerIdRotation"] = true
		}
	case "chat":
		set("theme", f.Theme)
		set("primaryColor", f.PrimaryColor)
		set("position", f.Position)
		set("greeting", f.Greeting)
		set("placeholder", f.Placeholder)
		set("title", f.Title)
		if f.AllowedDomains != "" {
			var ds []string
			for _, d := range strings.FieldsFunc(f.AllowedDomains, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
				ds = append(ds, d)
			}
			cfg["allowedDomains"] = ds
		}
		if err := num("maxMessagesPerDay", f.MaxPerDay); err != nil {
			return nil, err
		}
		if f.VoiceEnabled {
			cfg["voiceEnabled"] = true
		}
	}
	return cfg, nil
}

// mergeConfig lays the form's settings of type typ over the stored config:
// keys the form shows are replaced or removed, every other key is kept as
// stored, byte for byte. An unchecked box (callerIdRotation) writes false
// only where the stored config had the key, so an untouched agent saves to
// the config it had.
func mergeConfig(stored json.RawMessage, typ string, shown map[string]any) (json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if t := strings.TrimSpace(string(stored)); t != "" && t != "null" {
		if err := json.Unmarshal(stored, &out); err != nil {
			return nil, errs.InvalidField("config", "the stored config is not an object")
		}
	}
	_, hadRotation := out["callerIdRotation"]
	_, hadVoice := out["voiceEnabled"]
	for _, keys := range formConfigKeys {
		for _, k := range keys {
			delete(out, k)
		}
	}
	if typ == "voice" && hadRotation && shown["callerIdRotation"] == nil {
		out["callerIdRotation"] = json.RawMessage("false")
	}
	if typ == "chat" && hadVoice && shown["voiceEnabled"] == nil {
		out["voiceEnabled"] = json.RawMessage("false")
	}
	for k, v := range shown {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return json.Marshal(out)
}

// jobForm reads a job's fields from a form; absent fields stay nil.
func jobForm(r *http.Request) agents.JobInput {
	v := func(k string) *string {
		if _, ok := r.PostForm[k]; !ok {
			return nil
		}
		s := strings.TrimSpace(r.PostFormValue(k))
		return &s
	}
	return agents.JobInput{Name: v("name"), Status: v("status"), TriggerType: v("triggerType"), TrustLevel: v("trustLevel")}
}

func (s *Site) createJob(w http.ResponseWriter, r *http.Request, u user) error {
	in := jobForm(r)
	agentID := r.PathValue("id")
	in.AgentID = &agentID
	if _, err := s.f.Agents.CreateJob(r.Context(), u.OrgID, in); err != nil {
		return err
	}
	redirect(w, r, "/agents/"+agentID, "Job created")
	return nil
}

func (s *Site) updateJob(w http.ResponseWriter, r *http.Request, u user) error {
	j, err := s.f.Agents.UpdateJob(r.Context(), u.OrgID, r.PathValue("id"), jobForm(r))
	if err != nil {
		return err
	}
	redirect(w, r, "/agents/"+j.AgentID, "Job saved")
	return nil
}

func (s *Site) deleteJob(w http.ResponseWriter, r *http.Request, u user) error {
	j, err := s.f.Agents.GetJob(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.f.Agents.DeleteJob(r.Context(), u.OrgID, j.ID); err != nil {
		return err
	}
	redirect(w, r, "/agents/"+j.AgentID, "Job deleted")
	return nil
}
