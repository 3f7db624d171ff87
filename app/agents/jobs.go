package agents

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/sqldb"
)

var (
	jobStatuses     = []string{"active", "paused"}
	jobTriggerTypes = []string{"manual", "schedule", "inbound_call", "outbound_campaign", "webhook"}
	jobTrustLevels  = []string{"supervised", "semi_autonomous", "autonomous"}
)

const maxJobName = 200

// JobInput is a job create or partial update; nil fields are absent.
type JobInput struct {
	AgentID     *string `json:"agentId"`
	Name        *string `json:"name"`
	Status      *string `json:"status"`
	TriggerType *string `json:"triggerType"`
	TrustLevel  *string `json:"trustLevel"`
}

// apply copies the present fields of in onto j.
func (in JobInput) apply(j *agentstore.Job) {
	for _, f := range []struct {
		dst *string
		src *string
	}{{&j.AgentID, in.AgentID}, {&j.Name, in.Name}, {&j.Status, in.Status}, {&j.TriggerType, in.TriggerType}, {&j.TrustLevel, in.TrustLevel}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
}

// validateJob checks a whole job and trims its name and agent id.
func validateJob(j *agentstore.Job) error {
	j.Name = strings.TrimSpace(j.Name)
	j.AgentID = strings.TrimSpace(j.AgentID)
	switch {
	case j.AgentID == "":
		return invalidf("agentId", "required")
	case j.Name == "":
		return invalidf("name", "required (1 to %d characters)", maxJobName)
	case utf8.RuneCountInString(j.Name) > maxJobName:
		return invalidf("name", "at most %d characters", maxJobName)
	case !slices.Contains(jobStatuses, j.Status):
		return invalidf("status", "must be active or paused, got %q", j.Status)
	case !slices.Contains(jobTriggerTypes, j.TriggerType):
		return invalidf("triggerType", "must be one of %s, got %q", strings.Join(jobTriggerTypes, ", "), j.TriggerType)
	case !slices.Contains(jobTrustLevels, j.TrustLevel):
		return invalidf("trustLevel", "must be one of %s, got %q", strings.Join(jobTrustLevels, ", "), j.TrustLevel)
	}
	return nil
}

// jobErr names what was not found: the job, or the agent it points at.
func jobErr(err error) error {
	if !errors.Is(err, sqldb.ErrNotFound) {
		return err
	}
	msg := "job not found"
	if strings.HasPrefix(err.Error(), "agent ") {
		msg = "agent not found"
	}
	return errs.Wrap(errs.NotFound, msg, err)
}

// CreateJob assigns a new job to an agent of the organization. Defaults:
// status active, triggerType manual, trustLevel supervised.
func (s *Service) CreateJob(ctx context.Context, orgID string, in JobInput) (agentstore.Job, error) {
	j := agentstore.Job{OrgID: orgID, Status: "active", TriggerType: "manual", TrustLevel: "supervised"}
	in.apply(&j)
	if err := validateJob(&j); err != nil {
		return agentstore.Job{}, err
	}
	j, err := s.db.Agents.CreateJob(ctx, j)
	return j, jobErr(err)
}

// GetJob reads a job of the organization; any other is "job not found".
// The API checks it before decoding an update, so an unknown job is 404
// even with a bad body.
func (s *Service) GetJob(ctx context.Context, orgID, id string) (agentstore.Job, error) {
	j, err := s.db.Agents.GetJob(ctx, orgID, id)
	return j, jobErr(err)
}

// ListJobs lists the organization's jobs, newest first; agentID, when set,
// keeps one agent's.
func (s *Service) ListJobs(ctx context.Context, orgID, agentID string) ([]agentstore.Job, error) {
	return s.db.Agents.ListJobs(ctx, orgID, agentID)
}

// UpdateJob changes the present fields of a job (agentId moves it to
// another agent of the organization).
func (s *Service) UpdateJob(ctx context.Context, orgID, id string, in JobInput) (agentstore.Job, error) {
	j, err := s.db.Agents.UpdateJob(ctx, orgID, id, func(j *agentstore.Job) error {
		in.apply(j)
		return validateJob(j)
	})
	return j, jobErr(err)
}

// DeleteJob removes a job of the organization.
func (s *Service) DeleteJob(ctx context.Context, orgID, id string) error {
	return jobErr(s.db.Agents.DeleteJob(ctx, orgID, id))
}

// JobView is a job as the API and the CLI's --json show it.
type JobView struct {
	ID          string `json:"id"`
	AgentID     string `json:"agentId"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	TriggerType string `json:"triggerType"`
	TrustLevel  string `json:"trustLevel"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
}

// NewJobView builds the view of a job.
func NewJobView(j agentstore.Job) JobView {
	return JobView{ID: j.ID, AgentID: j.AgentID, Name: j.Name, Status: j.Status, TriggerType: j.TriggerType,
		TrustLevel: j.TrustLevel, CreatedAt: formatTime(j.CreatedAt), UpdatedAt: formatTime(j.UpdatedAt)}
}

// NewJobViews builds the views of a list of jobs (never nil).
func NewJobViews(js []agentstore.Job) []JobView {
	out := make([]JobView, 0, len(js))
	for _, j := range js {
		out = append(out, NewJobView(j))
	}
	return out
}
