package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// Paging of the v1 agent list.
const (
	defaultAgentLimit = 50
	maxAgentLimit     = 100
)

// AgentQuery selects a page of the v1 agent list.
type AgentQuery struct {
	Type   string // voice, chat or "" for both
	Status string // an agent status or "" for any
	Limit  int    // 1-100
	Offset int    // >= 0
}

// ParseAgentQuery reads type, status, limit and offset from a query string.
// Invalid values are refused (400), never clamped, so a client bug shows at
// once; an empty value counts as absent.
func ParseAgentQuery(v url.Values) (AgentQuery, error) {
	q := AgentQuery{Type: v.Get("type"), Status: v.Get("status"), Limit: defaultAgentLimit}
	if q.Type != "" && !slices.Contains(agentTypes, q.Type) {
		return q, badRequest(fmt.Sprintf("type: must be voice or chat, got %q", q.Type))
	}
	if q.Status != "" && !slices.Contains(agentStatuses, q.Status) {
		return q, badRequest(fmt.Sprintf("status: must be one of active, inactive, training, deployed, got %q", q.Status))
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxAgentLimit {
			return q, badRequest(fmt.Sprintf("limit: must be an integer from 1 to %d, got %q", maxAgentLimit, s))
		}
		q.Limit = n
	}
	if s := v.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, badRequest(fmt.Sprintf("offset: must be an integer >= 0, got %q", s))
		}
		q.Offset = n
	}
	return q, nil
}

// ListAgents returns one page of the organization's agents, newest first,
// and whether another page follows.
func ListAgents(ctx context.Context, db *storage.DB, orgID string, q AgentQuery) ([]storage.Agent, bool, error) {
	if q.Limit == 0 {
		q.Limit = defaultAgentLimit
	}
	if q.Limit < 1 || q.Limit > maxAgentLimit || q.Offset < 0 {
		return nil, false, badRequest(fmt.Sprintf("limit must be 1 to %d and offset >= 0", maxAgentLimit))
	}
	return db.ListAgents(ctx, orgID, storage.AgentFilter{Type: q.Type, Status: q.Status, Limit: q.Limit, Offset: q.Offset})
}

// GetAgent reads an agent of the organization; any other is "agent not found".
func GetAgent(ctx context.Context, db *storage.DB, orgID, id string) (storage.Agent, error) {
	a, err := db.GetAgent(ctx, orgID, id)
	return a, agentErr(err)
}

// CreateAgent validates a new agent (type and name required, status
// default active) and stores it.
func CreateAgent(ctx context.Context, db *storage.DB, orgID string, in AgentInput) (storage.Agent, error) {
	a := storage.Agent{OrgID: orgID, Status: "active"}
	in.apply(&a)
	if err := validateAgent(&a); err != nil {
		return storage.Agent{}, err
	}
	return db.CreateAgent(ctx, a)
}

// UpdateAgent applies the present fields of in to the agent and validates
// the result as a whole (a type change must suit the config and phone
// numbers it keeps), in one transaction.
func UpdateAgent(ctx context.Context, db *storage.DB, orgID, id string, in AgentInput) (storage.Agent, error) {
	a, err := db.UpdateAgent(ctx, orgID, id, func(a *storage.Agent) error {
		in.apply(a)
		return validateAgent(a)
	})
	return a, agentErr(err)
}

// DeleteAgent sets the agent inactive: it stays listed and its calls and
// jobs are kept (DECISIONS.md). Deleting an inactive agent is a no-op.
func DeleteAgent(ctx context.Context, db *storage.DB, orgID, id string) (storage.Agent, error) {
	a, err := db.UpdateAgent(ctx, orgID, id, func(a *storage.Agent) error {
		a.Status = "inactive"
		return nil
	})
	return a, agentErr(err)
}

// agentErr gives storage's not-found the agent family's message.
func agentErr(err error) error {
	if isNotFound(err) {
		return &Error{Kind: errs.NotFound, Message: "agent not found", Err: err}
	}
	return err
}

// AgentView is an agent as the v1 API (and the CLI's --json) shows it.
// PhoneNumbers is nil, so omitted, on chat agents.
type AgentView struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Status       string          `json:"status"`
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Config       json.RawMessage `json:"config"`
	Tools        json.RawMessage `json:"tools"`
	PhoneNumbers *[]string       `json:"phoneNumbers,omitempty"`
	Specialty    string          `json:"specialty"`
	DisplayRole  string          `json:"displayRole"`
	CreatedAt    string          `json:"createdAt"`
	UpdatedAt    string          `json:"updatedAt"`
}

// ViewAgent builds the v1 view of an agent.
func ViewAgent(a storage.Agent) AgentView {
	v := AgentView{ID: a.ID, Name: a.Name, Type: a.Type, Status: a.Status, Model: a.Model,
		Instructions: a.Instructions, Config: a.Config, Tools: a.Tools, Specialty: a.Specialty,
		DisplayRole: a.DisplayRole, CreatedAt: formatTime(a.CreatedAt), UpdatedAt: formatTime(a.UpdatedAt)}
	if len(v.Config) == 0 {
		v.Config = json.RawMessage("{}")
	}
	if len(v.Tools) == 0 {
		v.Tools = json.RawMessage("[]")
	}
	if a.Type == "voice" {
		phones := a.PhoneNumbers
		if phones == nil {
			phones = []string{}
		}
		v.PhoneNumbers = &phones
	}
	return v
}

// agentEnvelope is the v1 agent success body.
func agentEnvelope(data any) map[string]any { return map[string]any{"success": true, "data": data} }

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q, err := ParseAgentQuery(r.URL.Query())
	if err != nil {
		return err
	}
	agents, more, err := ListAgents(r.Context(), s.db, orgID(r), q)
	if err != nil {
		return err
	}
	out := make([]AgentView, 0, len(agents))
	for _, a := range agents {
		out = append(out, ViewAgent(a))
	}
	// total counts this page only: API.md's documented behaviour, kept.
	writeJSON(w, http.StatusOK, agentEnvelope(map[string]any{"agents": out,
		"pagination": map[string]any{"limit": q.Limit, "offset": q.Offset, "total": len(out), "hasMore": more}}))
	return nil
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in AgentInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	a, err := CreateAgent(r.Context(), s.db, orgID(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, agentEnvelope(ViewAgent(a)))
	return nil
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	a, err := GetAgent(r.Context(), s.db, orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, agentEnvelope(ViewAgent(a)))
	return nil
}

func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	// An unknown agent is 404 even with a bad body: existence is checked first.
	if _, err := GetAgent(r.Context(), s.db, orgID(r), p.ByName("id")); err != nil {
		return err
	}
	var in AgentInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	a, err := UpdateAgent(r.Context(), s.db, orgID(r), p.ByName("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, agentEnvelope(ViewAgent(a)))
	return nil
}

func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	a, err := DeleteAgent(r.Context(), s.db, orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, agentEnvelope(ViewAgent(a)))
	return nil
}
