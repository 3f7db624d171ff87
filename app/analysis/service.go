package analysis

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// View is an analysis as the API and the events show it.
type View struct {
	Status         string          `json:"status"` // pending, completed, failed or skipped
	Summary        *string         `json:"summary"`
	StructuredData json.RawMessage `json:"structuredData"`
	Success        any             `json:"success"`
	Model          *string         `json:"model"`
	Error          *string         `json:"error"`
	AnalyzedAt     *string         `json:"analyzedAt"`
}

// EventData is the data of call.analyzed and conversation.analyzed.
type EventData struct {
	CallID         string `json:"callId,omitempty"`
	ConversationID string `json:"conversationId,omitempty"`
	AgentID        string `json:"agentId"`
	Analysis       View   `json:"analysis"`
}

func view(status string, result json.RawMessage, at *time.Time) View {
	v := View{Status: status, StructuredData: json.RawMessage("null")}
	var r Result
	if len(result) > 0 && json.Unmarshal(result, &r) == nil {
		v.Summary, v.Success = r.Summary, r.Success
		if len(r.StructuredData) > 0 {
			v.StructuredData = r.StructuredData
		}
		if r.Model != "" {
			v.Model = &r.Model
		}
		if r.Error != "" {
			v.Error = &r.Error
		}
	}
	if status != analysisstore.StatusPending {
		v.AnalyzedAt = apitime.Ptr(at)
	}
	return v
}

func notFound(what string, err error) error {
	if errors.Is(err, sqldb.ErrNotFound) {
		return errs.Wrap(errs.NotFound, what+" not found", err)
	}
	return err
}

// SetPlan validates and stores an agent's plan; a JSON null removes it.
func (s *Service) SetPlan(ctx context.Context, orgID, agentID string, body []byte) (json.RawMessage, error) {
	plan, err := storedPlan(body)
	if err != nil {
		return nil, err
	}
	if err := s.d.Store.SavePlan(ctx, orgID, agentID, plan); err != nil {
		return nil, notFound("agent", err)
	}
	if plan == nil {
		return json.RawMessage("null"), nil
	}
	return plan, nil
}

// PlanWrite validates a plan as SetPlan does and returns its write, for the
// transaction that creates or updates the agent (agentstore.Also): the
// agent and its plan are stored together or not at all. A JSON null
// removes the plan.
func (s *Service) PlanWrite(body []byte) (func(ctx context.Context, tx *sql.Tx, orgID, agentID string) error, error) {
	plan, err := storedPlan(body)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, tx *sql.Tx, orgID, agentID string) error {
		return analysisstore.WritePlan(ctx, tx, orgID, agentID, plan)
	}, nil
}

// storedPlan is the plan as stored: parsed, checked and encoded again; nil
// for a JSON null.
func storedPlan(body []byte) (json.RawMessage, error) {
	if string(body) == "null" {
		return nil, nil
	}
	p, err := ParsePlan(body)
	if err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// GetPlan reads an agent's plan (JSON null when it has none).
func (s *Service) GetPlan(ctx context.Context, orgID, agentID string) (json.RawMessage, error) {
	p, err := s.d.Store.Plan(ctx, orgID, agentID)
	if err != nil {
		return nil, notFound("agent", err)
	}
	if p == nil {
		return json.RawMessage("null"), nil
	}
	return p, nil
}

// Get reads the analysis of the organization's call or conversation.
func (s *Service) Get(ctx context.Context, orgID, kind, id string) (View, error) {
	a, err := s.d.Store.Get(ctx, orgID, kind, id)
	if err != nil {
		return View{}, notFound("analysis of "+kind, err)
	}
	return view(a.Status, a.Result, a.AnalyzedAt), nil
}

// Find is Get for a record that may have no analysis: nil (and no error)
// when the call or conversation has none, so its GET can omit the field.
func (s *Service) Find(ctx context.Context, orgID, kind, id string) (*View, error) {
	a, err := s.d.Store.Get(ctx, orgID, kind, id)
	if errors.Is(err, sqldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v := view(a.Status, a.Result, a.AnalyzedAt)
	return &v, nil
}

// CheckPlan validates a plan as SetPlan does without storing it, so an
// agent's create refuses a bad plan before the agent exists. A JSON null
// is no plan.
func CheckPlan(body []byte) error {
	if string(bytes.TrimSpace(body)) == "null" {
		return nil
	}
	_, err := ParsePlan(body)
	return err
}

// Progress is a bulk re-analysis's or a batch's state.
type Progress struct {
	Queued    int `json:"queued"`
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Skipped   int `json:"skipped"`
	// SuccessRate is the share of completed pass_fail analyses that passed
	// (null when none has such a verdict).
	SuccessRate *float64 `json:"successRate"`
	// Fields counts the answers of each enum or boolean field of the
	// structured data: field -> answer -> count.
	Fields map[string]map[string]int `json:"fields"`
}

// Reanalyze queues the selected calls again (after a prompt change).
func (s *Service) Reanalyze(ctx context.Context, orgID string, f analysisstore.CallFilter) (int, error) {
	n, err := s.d.Store.Reanalyze(ctx, orgID, f)
	if errors.Is(err, sqldb.ErrConflict) {
		return 0, errs.New(errs.Invalid, "give callIds, batchId or agentId")
	}
	if err != nil {
		return 0, err
	}
	s.Wake()
	return n, nil
}

// BatchProgress counts a batch's analyses by status, its success rate and
// the answers of each enum or boolean structured field.
func (s *Service) BatchProgress(ctx context.Context, orgID, batchID string) (Progress, error) {
	rows, err := s.d.Store.List(ctx, orgID, batchID)
	if err != nil {
		return Progress{}, err
	}
	p := Progress{Total: len(rows), Fields: map[string]map[string]int{}}
	pass, judged := 0, 0
	for _, a := range rows {
		switch a.Status {
		case analysisstore.StatusPending:
			p.Pending++
		case analysisstore.StatusCompleted:
			p.Completed++
		case analysisstore.StatusFailed:
			p.Failed++
		default:
			p.Skipped++
		}
		if a.Status != analysisstore.StatusCompleted {
			continue
		}
		var r Result
		if json.Unmarshal(a.Result, &r) != nil {
			continue
		}
		if b, ok := r.Success.(bool); ok {
			judged++
			if b {
				pass++
			}
		}
		var fields map[string]any
		if json.Unmarshal(r.StructuredData, &fields) == nil {
			for k, v := range fields {
				var ans string
				switch x := v.(type) {
				case bool:
					ans = map[bool]string{true: "true", false: "false"}[x]
				case string:
					ans = x
				default:
					continue
				}
				if p.Fields[k] == nil {
					p.Fields[k] = map[string]int{}
				}
				p.Fields[k][ans]++
			}
		}
	}
	if judged > 0 {
		r := float64(pass) / float64(judged)
		p.SuccessRate = &r
	}
	if len(rows) > 0 { // only the enum and boolean fields of the plan's schema are charted
		keep := map[string]bool{}
		if raw, err := s.d.Store.Plan(ctx, orgID, rows[0].AgentID); err == nil && raw != nil {
			keep = chartable(raw)
		}
		for k := range p.Fields {
			if !keep[k] {
				delete(p.Fields, k)
			}
		}
	}
	return p, nil
}

// chartable names the top-level properties of the plan's schema that are
// an enum or a boolean.
func chartable(plan json.RawMessage) map[string]bool {
	var p struct {
		StructuredData *struct {
			Schema struct {
				Properties map[string]struct {
					Type any   `json:"type"`
					Enum []any `json:"enum"`
				} `json:"properties"`
			} `json:"schema"`
		} `json:"structuredData"`
	}
	out := map[string]bool{}
	if json.Unmarshal(plan, &p) != nil || p.StructuredData == nil {
		return out
	}
	for name, prop := range p.StructuredData.Schema.Properties {
		out[name] = len(prop.Enum) > 0 || prop.Type == "boolean"
	}
	return out
}

// SuccessText is the verdict as a page shows it ("" when none).
func (v View) SuccessText() string {
	if v.Success == nil {
		return ""
	}
	return fmt.Sprint(v.Success)
}

// HasData says the analysis carries structured data.
func (v View) HasData() bool {
	return len(v.StructuredData) > 0 && string(v.StructuredData) != "null"
}
