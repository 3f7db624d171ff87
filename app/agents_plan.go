package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage/agentstore"
)

// An agent's analysisPlan (issue 24) is a field of the agent on the v1
// routes, but app/analysis keeps it (storage/analysisstore), so these
// handlers read and write it beside app/agents rather than inside it.

// agentInput is an agent's create or update body with its analysisPlan.
// The two are decoded apart, not by embedding agents.Input: encoding/json
// would name a mistyped field "Input.name" and change the golden errors.
type agentInput struct {
	agents.Input
	AnalysisPlan json.RawMessage
}

// decodeAgentInput reads an agent's body: its fields, then its plan.
func decodeAgentInput(r *http.Request) (agentInput, error) {
	var in agentInput
	body, err := readBody(r)
	if err != nil {
		return in, err
	}
	if err := decodeBytes(body, &in.Input); err != nil {
		return in, err
	}
	var plan struct {
		AnalysisPlan json.RawMessage `json:"analysisPlan"`
	}
	if err := decodeBytes(body, &plan); err != nil {
		return in, err
	}
	in.AnalysisPlan = plan.AnalysisPlan
	return in, nil
}

// checkPlan validates a given plan as PUT .../analysis-plan does (the error
// names the field, e.g. analysisPlan.structuredData.schema); absent and
// null pass.
func (s *Server) checkPlan(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return analysis.CheckPlan(raw)
}

// savePlan stores a given plan through the analysis service (null removes
// it); absent leaves the stored one.
func (s *Server) savePlan(ctx context.Context, orgID, agentID string, raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	svc := s.analysis.Service()
	if svc == nil {
		return errs.New(errs.Unavailable, "post-call analysis is not running: the analysis plan was not saved")
	}
	_, err := svc.SetPlan(ctx, orgID, agentID, raw)
	return err
}

// writeAgent writes one agent's v1 body with its analysis plan, if any.
func (s *Server) writeAgent(w http.ResponseWriter, r *http.Request, status int, a agentstore.Agent) error {
	v := agents.NewView(a)
	if svc := s.analysis.Service(); svc != nil {
		plan, err := svc.GetPlan(r.Context(), orgID(r), a.ID)
		if err != nil {
			return err
		}
		if string(plan) != "null" {
			v.AnalysisPlan = plan
		}
	}
	writeJSON(w, status, agentOK(v))
	return nil
}

// callWithAnalysis is GET /api/v1/calls/{id}'s data: the call and, once
// it has one, its analysis (absent otherwise, so older bodies are unchanged).
type callWithAnalysis struct {
	calls.Record
	Analysis *analysis.View `json:"analysis,omitempty"`
}

// findAnalysis reads the analysis of a call or a conversation the caller
// has already found in its organization; nil when it has none.
func (s *Server) findAnalysis(ctx context.Context, orgID, kind, id string) (*analysis.View, error) {
	svc := s.analysis.Service()
	if svc == nil {
		return nil, nil
	}
	return svc.Find(ctx, orgID, kind, id)
}
