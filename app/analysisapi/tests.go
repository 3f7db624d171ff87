package analysisapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/errs"
)

// UseTests sets the agent test runner (built on the conversation engine).
func (h *Handlers) UseTests(r agenttest.Runner) { h.tests = &r }

// RunTests answers POST /api/v1/agents/{id}/tests: the body is a test file
// (YAML or JSON); the answer is the report (200 whether scenarios passed
// or not: passed and failed say).
func (h *Handlers) RunTests(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if h.tests == nil {
		return errs.New(errs.Unavailable, "agent tests are not wired")
	}
	// Another organization's agent is 404 before its body is read.
	if _, err := h.d.Analysis.GetPlan(r.Context(), h.d.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(nil, r.Body, agenttest.MaxFileBytes) // refused before it is all read
	b, err := h.d.ReadBody(r)
	if err != nil {
		return err
	}
	suite, err := agenttest.Parse(b)
	if err != nil {
		return err
	}
	rep, err := h.tests.Run(r.Context(), h.d.OrgID(r), p.ByName("id"), suite)
	if err != nil {
		return err
	}
	h.d.WriteData(w, http.StatusOK, rep)
	return nil
}
