// Package agents is the HTTP face of agents, the workforce view and jobs
// (app/agents). Package app/api keeps the route table, auth and the error
// mapping; the handlers decode, answer and fail with app/api/httpx.
package agents

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/agents"
	analysisapi "github.com/agentd/agentd/app/api/analysis"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/storage/agentstore"
)

// Deps are what the handlers use.
type Deps struct {
	Agents *agents.Service
	Plans  *analysisapi.Handlers // an agent's analysisPlan is read and written with it
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers over the service.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// The handlers of /api/v1/agents, /api/v2/agents and /api/v2/jobs: decode,
// one call into app/agents, encode. The response structs list their fields
// in sorted order, the order the maps they replace were encoded in, so the
// bodies stay byte-identical.

// agentBody is the v1 agent success body {data, success:true}.
type agentBody[T any] struct {
	Data    T    `json:"data"`
	Success bool `json:"success"`
}

// agentOK wraps data in the v1 success body.
func agentOK[T any](data T) agentBody[T] { return agentBody[T]{Data: data, Success: true} }

// agentPage is the data of the v1 agent list.
type agentPage struct {
	Agents     []agents.View   `json:"agents"`
	Pagination agentPagination `json:"pagination"`
}

// agentPagination pages the v1 list; total counts this page only
// (API.md's documented behaviour, kept).
type agentPagination struct {
	HasMore bool `json:"hasMore"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	Total   int  `json:"total"`
}

// workforceBody is the v2 body of workers and jobs: {data, meta}.
type workforceBody[T any] struct {
	Data T             `json:"data"`
	Meta workforceMeta `json:"meta"`
}

// workforceMeta is the meta object of the v2 bodies.
type workforceMeta struct {
	Timestamp string `json:"timestamp"`
}

// workforceOK wraps data in the v2 body stamped with the server's now.
func workforceOK[T any](h *Handlers, data T) workforceBody[T] {
	return workforceBody[T]{Data: data, Meta: workforceMeta{Timestamp: apitime.Format(httpx.Now())}}
}

// workersData is the data of GET /api/v2/agents.
type workersData struct {
	Agents []agents.Worker `json:"agents"`
	Count  int             `json:"count"`
}

// jobsData is the data of GET /api/v2/jobs.
type jobsData struct {
	Count int              `json:"count"`
	Jobs  []agents.JobView `json:"jobs"`
}

// jobDeletedData is the data of DELETE /api/v2/jobs/:id.
type jobDeletedData struct {
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}

func (h *Handlers) ListAgents(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q, err := agents.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	as, more, err := h.d.Agents.List(r.Context(), httpx.OrgID(r), q)
	if err != nil {
		return err
	}
	out := agents.NewViews(as)
	httpx.WriteJSON(w, http.StatusOK, agentOK(agentPage{Agents: out,
		Pagination: agentPagination{HasMore: more, Limit: q.Limit, Offset: q.Offset, Total: len(out)}}))
	return nil
}

func (h *Handlers) CreateAgent(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in agents.Input // a bad analysisPlan is refused before the agent exists
	savePlan, err := h.d.Plans.DecodeAgent(r, &in)
	if err != nil {
		return err
	}
	// The plan is written in the agent's transaction: both or neither.
	a, err := h.d.Agents.CreateWith(r.Context(), httpx.OrgID(r), in, savePlan)
	if err != nil {
		return err
	}
	return h.writeAgent(w, r, http.StatusCreated, a)
}

func (h *Handlers) GetAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	a, err := h.d.Agents.Get(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	return h.writeAgent(w, r, http.StatusOK, a)
}

func (h *Handlers) UpdateAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	// An unknown agent is 404 even with a bad body: existence is checked first.
	if _, err := h.d.Agents.Get(r.Context(), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	var in agents.Input
	savePlan, err := h.d.Plans.DecodeAgent(r, &in)
	if err != nil {
		return err
	}
	a, err := h.d.Agents.UpdateWith(r.Context(), httpx.OrgID(r), p.ByName("id"), in, savePlan)
	if err != nil {
		return err
	}
	return h.writeAgent(w, r, http.StatusOK, a)
}

// writeAgent writes one agent's v1 body with its analysis plan, if any.
func (h *Handlers) writeAgent(w http.ResponseWriter, r *http.Request, status int, a agentstore.Agent) (err error) {
	v := agents.NewView(a)
	if v.AnalysisPlan, err = h.d.Plans.PlanOf(r.Context(), httpx.OrgID(r), a.ID); err == nil {
		httpx.WriteJSON(w, status, agentOK(v))
	}
	return err
}

func (h *Handlers) DeleteAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	a, err := h.d.Agents.Delete(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, agentOK(agents.NewView(a)))
	return nil
}

func (h *Handlers) ListWorkers(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ws, err := h.d.Agents.ListWorkers(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, workforceOK(h, workersData{Agents: ws, Count: len(ws)}))
	return nil
}

func (h *Handlers) CreateJob(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in agents.JobInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	j, err := h.d.Agents.CreateJob(r.Context(), httpx.OrgID(r), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, workforceOK(h, agents.NewJobView(j)))
	return nil
}

func (h *Handlers) ListJobs(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	js, err := h.d.Agents.ListJobs(r.Context(), httpx.OrgID(r), r.URL.Query().Get("agentId"))
	if err != nil {
		return err
	}
	out := agents.NewJobViews(js)
	httpx.WriteJSON(w, http.StatusOK, workforceOK(h, jobsData{Count: len(out), Jobs: out}))
	return nil
}

func (h *Handlers) UpdateJob(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	// An unknown job is 404 even with a bad body: existence is checked first.
	if _, err := h.d.Agents.GetJob(r.Context(), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	var in agents.JobInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	j, err := h.d.Agents.UpdateJob(r.Context(), httpx.OrgID(r), p.ByName("id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, workforceOK(h, agents.NewJobView(j)))
	return nil
}

func (h *Handlers) DeleteJob(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("id")
	if err := h.d.Agents.DeleteJob(r.Context(), httpx.OrgID(r), id); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, workforceOK(h, jobDeletedData{Deleted: true, ID: id}))
	return nil
}
