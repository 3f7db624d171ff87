// Package analysis is the HTTP face of post-call analysis (app/analysis):
// an agent's analysis plan, a call's or a conversation's analysis,
// re-analysis one by one or in bulk, and a batch's analysis progress.
// Package app/api keeps the route table, auth and the error mapping; this
// package decodes, calls one use case and writes, with app/api/httpx.
package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/analysisstore"
)

// Deps are what the handlers use.
type Deps struct {
	Analysis *analysis.Service
	// Tests runs agent test files on the conversation engine (nil: not wired).
	Tests *agenttest.Runner
}

// Handlers are the routes' handlers.
type Handlers struct {
	d     Deps
	tests *agenttest.Runner
}

// New builds the handlers over the service and the agent test runner.
func New(d Deps) *Handlers { return &Handlers{d: d, tests: d.Tests} }

// Service is the analysis service (the dashboard reads analyses through it).
func (h *Handlers) Service() *analysis.Service { return h.d.Analysis }

// GetPlan answers GET /api/v1/agents/{id}/analysis-plan.
func (h *Handlers) GetPlan(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	plan, err := h.d.Analysis.GetPlan(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, map[string]json.RawMessage{"analysisPlan": plan})
	return nil
}

// PutPlan answers PUT /api/v1/agents/{id}/analysis-plan: the body is
// {"analysisPlan": {...}} (null removes it), checked before it is stored.
func (h *Handlers) PutPlan(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	// Another organization's agent is 404 before its body is read.
	if _, err := h.d.Analysis.GetPlan(r.Context(), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	b, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	var in struct {
		AnalysisPlan json.RawMessage `json:"analysisPlan"`
	}
	if err := httpx.DecodeBytes(b, &in); err != nil {
		return err
	}
	if len(bytes.TrimSpace(in.AnalysisPlan)) == 0 {
		return errs.InvalidField("analysisPlan", "is required (an object, or null to remove the plan)")
	}
	plan, err := h.d.Analysis.SetPlan(r.Context(), httpx.OrgID(r), p.ByName("id"), in.AnalysisPlan)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, map[string]json.RawMessage{"analysisPlan": plan})
	return nil
}

// CallAnalysis answers GET /api/v1/calls/{id}/analysis.
func (h *Handlers) CallAnalysis(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	return h.get(w, r, analysisstore.KindCall, p.ByName("id"))
}

// ConversationAnalysis answers GET /api/v1/conversations/{id}/analysis.
func (h *Handlers) ConversationAnalysis(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	return h.get(w, r, analysisstore.KindConversation, p.ByName("id"))
}

func (h *Handlers) get(w http.ResponseWriter, r *http.Request, kind, id string) error {
	v, err := h.d.Analysis.Get(r.Context(), httpx.OrgID(r), kind, id)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, v)
	return nil
}

// AnalyzeCall answers POST /api/v1/calls/{id}/analyze: the call is queued
// again (it needs a transcript and its agent a plan).
func (h *Handlers) AnalyzeCall(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("id")
	n, err := h.d.Analysis.Reanalyze(r.Context(), httpx.OrgID(r), analysisstore.CallFilter{IDs: []string{id}})
	if err != nil {
		return err
	}
	if n == 0 {
		return errs.New(errs.NotFound, "no call "+id+" with a transcript whose agent has an analysis plan")
	}
	v, err := h.d.Analysis.Get(r.Context(), httpx.OrgID(r), analysisstore.KindCall, id)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusAccepted, v)
	return nil
}

// bulkInput selects calls to analyse again: ids, a batch, or an agent's
// calls (optionally of one status).
type bulkInput struct {
	CallIDs []string `json:"callIds"`
	BatchID string   `json:"batchId"`
	AgentID string   `json:"agentId"`
	Status  string   `json:"status"`
}

// Bulk answers POST /api/v1/analyses: the selected calls are queued again;
// progress is read with GET /api/v1/analyses?batchId=.
func (h *Handlers) Bulk(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	b, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	var in bulkInput
	if err := httpx.DecodeBytes(b, &in); err != nil {
		return err
	}
	if len(in.CallIDs) > 1000 {
		return errs.InvalidField("callIds", "at most 1000 calls at once (use batchId or agentId)")
	}
	n, err := h.d.Analysis.Reanalyze(r.Context(), httpx.OrgID(r), analysisstore.CallFilter{IDs: in.CallIDs, BatchID: in.BatchID, AgentID: in.AgentID, Status: in.Status})
	if err != nil {
		return err
	}
	out := analysis.Progress{Queued: n, Fields: map[string]map[string]int{}}
	if in.BatchID != "" {
		if out, err = h.d.Analysis.BatchProgress(r.Context(), httpx.OrgID(r), in.BatchID); err != nil {
			return err
		}
		out.Queued = n
	}
	httpx.WriteData(w, http.StatusAccepted, out)
	return nil
}

// Progress answers GET /api/v1/analyses?batchId=: the batch's analyses by
// status, success rate and the answers of each enum or boolean field.
func (h *Handlers) Progress(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	batch := r.URL.Query().Get("batchId")
	if batch == "" {
		return errs.InvalidField("batchId", "is required")
	}
	out, err := h.d.Analysis.BatchProgress(r.Context(), httpx.OrgID(r), batch)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, out)
	return nil
}

// An agent's analysisPlan is also a field of the agent on the v1 agent
// routes (issue 24); app/api/agents keeps those handlers and asks these
// for the plan, which app/analysis keeps.

// DecodeAgent reads an agent's create or update body into in (the agent's
// fields) and returns the write of its analysisPlan, for the agent's own
// transaction (nil when the body has none; null removes the plan). The plan
// is checked here, as PutPlan checks it (the error names the field, e.g.
// analysisPlan.structuredData.schema), so a bad one is refused before
// anything is written.
func (h *Handlers) DecodeAgent(r *http.Request, in any) (agentstore.Also, error) {
	b, err := httpx.ReadBody(r)
	if err != nil {
		return nil, err
	}
	if err := httpx.DecodeBytes(b, in); err != nil {
		return nil, err
	}
	var p struct {
		AnalysisPlan json.RawMessage `json:"analysisPlan"`
	}
	if err := httpx.DecodeBytes(b, &p); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(p.AnalysisPlan)) == 0 {
		return nil, nil
	}
	if h.d.Analysis == nil {
		if err := analysis.CheckPlan(p.AnalysisPlan); err != nil {
			return nil, err
		}
		return nil, errs.New(errs.Unavailable, "post-call analysis is not running: the agent and its analysis plan were not saved")
	}
	return h.d.Analysis.PlanWrite(p.AnalysisPlan)
}

// PlanOf is the agent's plan for its v1 body; nil (so omitted) when it
// has none.
func (h *Handlers) PlanOf(ctx context.Context, orgID, agentID string) (json.RawMessage, error) {
	if h.d.Analysis == nil {
		return nil, nil
	}
	plan, err := h.d.Analysis.GetPlan(ctx, orgID, agentID)
	if err != nil || string(plan) == "null" {
		return nil, err
	}
	return plan, nil
}

// Find is the analysis of a call or a conversation the caller has already
// found in its organization, for its GET; nil when it has none.
func (h *Handlers) Find(ctx context.Context, orgID, kind, id string) (*analysis.View, error) {
	if h.d.Analysis == nil {
		return nil, nil
	}
	return h.d.Analysis.Find(ctx, orgID, kind, id)
}

// ConversationAnalysisOf is Find for convapi's hook: an untyped nil when the
// conversation has none, so its field is omitted rather than null.
func (h *Handlers) ConversationAnalysisOf(ctx context.Context, orgID, id string) (any, error) {
	v, err := h.Find(ctx, orgID, analysisstore.KindConversation, id)
	if v == nil || err != nil {
		return nil, err
	}
	return v, nil
}

// CallWithAnalysis is GET /api/v1/calls/{id}'s data: the call and, once it
// has one, its analysis (absent otherwise, so older bodies are unchanged).
type CallWithAnalysis struct {
	calls.Record
	Analysis *analysis.View `json:"analysis,omitempty"`
}

// WithCall adds the call's analysis, if any, to the record Get found.
func (h *Handlers) WithCall(ctx context.Context, orgID string, rec calls.Record) (CallWithAnalysis, error) {
	v, err := h.Find(ctx, orgID, analysisstore.KindCall, rec.ID)
	return CallWithAnalysis{Record: rec, Analysis: v}, err
}
