package agents

import (
	"encoding/json"
	"time"

	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/storage/agentstore"
)

const timeLayout = apitime.Layout

// formatTime is the API timestamp format (apitime.Format).
func formatTime(t time.Time) string { return apitime.Format(t) }

// View is an agent as the v1 API (and the CLI's --json) shows it.
// PhoneNumbers is nil, so omitted, on chat agents.
type View struct {
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
	Knowledge    json.RawMessage `json:"knowledge,omitempty"` // absent until set
	Fallback     *string         `json:"fallback,omitempty"`  // absent until set
	// AnalysisPlan is kept by app/analysis; the HTTP layer fills it on a
	// single agent's answers, absent when the agent has none.
	AnalysisPlan json.RawMessage `json:"analysisPlan,omitempty"`
	CreatedAt    string          `json:"createdAt"`
	UpdatedAt    string          `json:"updatedAt"`
}

// NewView builds the v1 view of an agent.
func NewView(a agentstore.Agent) View {
	v := View{ID: a.ID, Name: a.Name, Type: a.Type, Status: a.Status, Model: a.Model,
		Instructions: a.Instructions, Config: a.Config, Tools: a.Tools, Specialty: a.Specialty,
		DisplayRole: a.DisplayRole, Knowledge: a.Knowledge, Fallback: a.Fallback, CreatedAt: formatTime(a.CreatedAt), UpdatedAt: formatTime(a.UpdatedAt)}
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

// NewViews builds the views of a page of agents (never nil, so an empty
// page is [] in JSON).
func NewViews(as []agentstore.Agent) []View {
	out := make([]View, 0, len(as))
	for _, a := range as {
		out = append(out, NewView(a))
	}
	return out
}
