package app

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/storage/agentstore"
)

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
func workforceOK[T any](s *Server, data T) workforceBody[T] {
	return workforceBody[T]{Data: data, Meta: workforceMeta{Timestamp: formatTime(s.now())}}
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

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q, err := agents.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	as, more, err := agents.List(r.Context(), s.db, orgID(r), q)
	if err != nil {
		return err
	}
	out := agents.NewViews(as)
	writeJSON(w, http.StatusOK, agentOK(agentPage{Agents: out,
		Pagination: agentPagination{HasMore: more, Limit: q.Limit, Offset: q.Offset, Total: len(out)}}))
	return nil
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in agents.Input // a bad analysisPlan is refused before the agent exists
	plan, err := s.analysis.DecodeAgent(r, &in)
	if err != nil {
		return err
	}
	a, err := agents.Create(r.Context(), s.db, orgID(r), in)
	if err != nil {
		return err
	}
	if err := s.analysis.SaveAgentPlan(r.Context(), orgID(r), a.ID, plan); err != nil {
		return err
	}
	return s.writeAgent(w, r, http.StatusCreated, a)
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	a, err := agents.Get(r.Context(), s.db, orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	return s.writeAgent(w, r, http.StatusOK, a)
}

func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	// An unknown agent is 404 even with a bad body: existence is checked first.
	if _, err := agents.Get(r.Context(), s.db, orgID(r), p.ByName("id")); err != nil {
		return err
	}
	var in agents.Input
	plan, err := s.analysis.DecodeAgent(r, &in)
	if err != nil {
		return err
	}
	a, err := agents.Update(r.Context(), s.db, orgID(r), p.ByName("id"), in)
	if err != nil {
		return err
	}
	if err := s.analysis.SaveAgentPlan(r.Context(), orgID(r), a.ID, plan); err != nil {
		return err
	}
	return s.writeAgent(w, r, http.StatusOK, a)
}

// writeAgent writes one agent's v1 body with its analysis plan, if any.
func (s *Server) writeAgent(w http.ResponseWriter, r *http.Request, status int, a agentstore.Agent) (err error) {
	v := agents.NewView(a)
	if v.AnalysisPlan, err = s.analysis.PlanOf(r.Context(), orgID(r), a.ID); err == nil {
		writeJSON(w, status, agentOK(v))
	}
	return err
}

func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	a, err := agents.Delete(r.Context(), s.db, orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, agentOK(agents.NewView(a)))
	return nil
}

func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ws, err := agents.ListWorkers(r.Context(), s.db, orgID(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workforceOK(s, workersData{Agents: ws, Count: len(ws)}))
	return nil
}

func (s *Server) createJob(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in agents.JobInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	j, err := agents.CreateJob(r.Context(), s.db, orgID(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, workforceOK(s, agents.NewJobView(j)))
	return nil
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	js, err := agents.ListJobs(r.Context(), s.db, orgID(r), r.URL.Query().Get("agentId"))
	if err != nil {
		return err
	}
	out := agents.NewJobViews(js)
	writeJSON(w, http.StatusOK, workforceOK(s, jobsData{Count: len(out), Jobs: out}))
	return nil
}

func (s *Server) updateJob(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	// An unknown job is 404 even with a bad body: existence is checked first.
	if _, err := agents.GetJob(r.Context(), s.db, orgID(r), p.ByName("id")); err != nil {
		return err
	}
	var in agents.JobInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	j, err := agents.UpdateJob(r.Context(), s.db, orgID(r), p.ByName("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workforceOK(s, agents.NewJobView(j)))
	return nil
}

func (s *Server) deleteJob(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("id")
	if err := agents.DeleteJob(r.Context(), s.db, orgID(r), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workforceOK(s, jobDeletedData{Deleted: true, ID: id}))
	return nil
}
