package agents

import (
	"context"
	"fmt"

	"github.com/agentd/agentd/storage/agentstore"
)

// Worker is an agent as the v2 workforce view shows it.
type Worker struct {
	ID                string        `json:"id"`
	Name              string        `json:"name"`
	Type              string        `json:"type"`
	Status            string        `json:"status"`
	Model             string        `json:"model"`
	Specialty         string        `json:"specialty"`
	DisplayRole       string        `json:"displayRole"`
	WorkforceStatus   string        `json:"workforceStatus"`
	TotalActions      int64         `json:"totalActions"`
	SuccessfulActions int64         `json:"successfulActions"`
	ReliabilityScore  string        `json:"reliabilityScore"`
	PhoneNumbers      []string      `json:"phoneNumbers"`
	AssignedJobs      []AssignedJob `json:"assignedJobs"`
	CreatedAt         string        `json:"createdAt"`
	UpdatedAt         string        `json:"updatedAt"`
}

// AssignedJob is a job as a worker lists it.
type AssignedJob struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	TriggerType string `json:"triggerType"`
	TrustLevel  string `json:"trustLevel"`
}

// ListWorkers is every agent of the organization, newest first, as workers
// with their stats and assigned jobs.
func (s *Service) ListWorkers(ctx context.Context, orgID string) ([]Worker, error) {
	ws, err := s.db.Agents.ListWorkers(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]Worker, 0, len(ws))
	for _, w := range ws {
		out = append(out, newWorker(w))
	}
	return out, nil
}

// newWorker derives the workforce fields (DECISIONS.md "Agents and
// workers") from the agent's call counters.
func newWorker(w agentstore.Worker) Worker {
	v := Worker{ID: w.ID, Name: w.Name, Type: w.Type, Status: w.Status, Model: w.Model,
		Specialty: w.Specialty, DisplayRole: w.DisplayRole, WorkforceStatus: workforceStatus(w),
		TotalActions: w.FinishedCalls, SuccessfulActions: w.CompletedCalls,
		ReliabilityScore: reliabilityScore(w.CompletedCalls, w.FinishedCalls),
		PhoneNumbers:     w.PhoneNumbers, AssignedJobs: make([]AssignedJob, 0, len(w.Jobs)),
		CreatedAt: formatTime(w.CreatedAt), UpdatedAt: formatTime(w.UpdatedAt)}
	if v.PhoneNumbers == nil {
		v.PhoneNumbers = []string{}
	}
	for _, j := range w.Jobs {
		v.AssignedJobs = append(v.AssignedJobs, AssignedJob{ID: j.ID, Name: j.Name, Status: j.Status,
			TriggerType: j.TriggerType, TrustLevel: j.TrustLevel})
	}
	return v
}

// workforceStatus: inactive agents are inactive; an agent with a call
// queued, connecting, ringing or active is active; any other is idle.
func workforceStatus(w agentstore.Worker) string {
	switch {
	case w.Status == "inactive":
		return "inactive"
	case w.LiveCalls > 0:
		return "active"
	}
	return "idle"
}

// reliabilityScore is completed/finished rounded half up to four decimals,
// in integer arithmetic so 12/13 is always "0.9231"; "0.0000" without
// finished calls.
func reliabilityScore(completed, finished int64) string {
	if finished <= 0 || completed < 0 {
		return "0.0000"
	}
	completed = min(completed, finished)
	r := (completed*20000 + finished) / (2 * finished)
	return fmt.Sprintf("%d.%04d", r/10000, r%10000)
}
