package analysis

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/errs"
)

// RunTests answers POST /api/v1/agents/{id}/tests: the body is a test file
// (YAML or JSON); the answer is the report (200 whether scenarios passed
// or not: passed and failed say).
func (h *Handlers) RunTests(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if h.tests == nil {
		return errs.New(errs.Unavailable, "agent tests are not wired")
	}
	// Another organization's agent is 404 before its body is read.
	if _, err := h.d.Analysis.GetPlan(r.Context(), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(nil, r.Body, agenttest.MaxFileBytes) // refused before it is all read
	b, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	suite, err := agenttest.Parse(b)
	if err != nil {
		return err
	}
	rep, err := h.tests.Run(r.Context(), httpx.OrgID(r), p.ByName("id"), suite)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, rep)
	return nil
}
