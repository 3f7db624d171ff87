package calls

import (
	"context"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/storage/callstore"
)

// ScheduleRequest is the body of POST /api/v1/calls/schedule. Pointers
// tell a missing field from an empty one.
type ScheduleRequest struct {
	AgentID        *string              `json:"agentId"`
	ContactPhone   *string              `json:"contactPhone"`
	ContactName    *string              `json:"contactName"`
	ContactEmail   *string              `json:"contactEmail"`
	CallerID       *string              `json:"callerId"`
	ScheduledAt    *string              `json:"scheduledAt"`
	Priority       *int                 `json:"priority"`
	MaxRetries     *int                 `json:"maxRetries"`
	RetrySchedule  []string             `json:"retrySchedule"`
	RetryIntervals []dial.RetryInterval `json:"retryIntervals"`
	CallMetadata   map[string]any       `json:"callMetadata"`
	Metadata       map[string]any       `json:"metadata"`
}

// Scheduled is the answer to a schedule request. Its fields keep the
// alphabetical order the answer always had.
type Scheduled struct {
	Agent       AgentName        `json:"agent"`
	Contact     ScheduledContact `json:"contact"`
	ID          string           `json:"id"`
	ScheduledAt *string          `json:"scheduledAt"` // null: dialled now
	Status      string           `json:"status"`
}

// ScheduledContact is the callee of a scheduled call (null for a name or
// email not given).
type ScheduledContact struct {
	Email *string `json:"email"`
	Name  *string `json:"name"`
	Phone string  `json:"phone"`
}

// AgentName names the agent of a scheduled call.
type AgentName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// scheduled is a validated schedule request.
type scheduled struct {
	agentID, phone, name, email, callerID string
	at                                    *time.Time // nil: immediate
	priority                              int
	policy                                dial.RetryPolicy
	callMeta, meta                        map[string]any
}

// validateSchedule checks and cleans a schedule request (no agent lookup).
func validateSchedule(req ScheduleRequest, now time.Time) (scheduled, error) {
	var sc scheduled
	var err error
	if sc.agentID, err = checkAgentID(req.AgentID); err != nil {
		return sc, err
	}
	if sc.phone, err = checkPhone("contactPhone", req.ContactPhone); err != nil {
		return sc, err
	}
	if sc.name, err = checkName("contactName", req.ContactName); err != nil {
		return sc, err
	}
	if sc.email, err = checkEmail("contactEmail", req.ContactEmail); err != nil {
		return sc, err
	}
	if sc.callerID, err = checkOptPhone("callerId", req.CallerID); err != nil {
		return sc, err
	}
	if sc.at, err = checkTime("scheduledAt", req.ScheduledAt); err != nil {
		return sc, err
	}
	if sc.at != nil && sc.at.Before(now) {
		t := now.Add(pastShift)
		sc.at = &t
	}
	if sc.priority, err = checkPriority("priority", req.Priority, DefaultPriority); err != nil {
		return sc, err
	}
	rc := dial.RetryConfig{MaxRetries: req.MaxRetries, RetryIntervals: req.RetryIntervals}
	for _, s := range req.RetrySchedule {
		rc.RetrySchedule = append(rc.RetrySchedule, clean.String(s))
	}
	if sc.policy, err = rc.Policy(); err != nil {
		return sc, retryError("", err)
	}
	if req.CallMetadata != nil {
		sc.callMeta = cleanValue(req.CallMetadata).(map[string]any)
		if err := checkMetadata("callMetadata", sc.callMeta); err != nil {
			return sc, err
		}
	}
	if req.Metadata != nil {
		sc.meta = cleanValue(req.Metadata).(map[string]any)
	}
	return sc, nil
}

// Schedule stores one call for later (or now, without scheduledAt) and
// wakes the scheduler. It returns the call and the client message.
func (s *Service) Schedule(ctx context.Context, c Caller, req ScheduleRequest) (Scheduled, string, error) {
	now := s.now()
	sc, err := validateSchedule(req, now)
	if err != nil {
		return Scheduled{}, "", err
	}
	agent, err := s.agent(ctx, c, sc.agentID)
	if err != nil {
		return Scheduled{}, "", err
	}
	if err := checkSchedulable(agent); err != nil {
		return Scheduled{}, "", err
	}
	if err := s.checkDNC(ctx, agent.OrgID, "contactPhone", sc.phone); err != nil {
		return Scheduled{}, "", err
	}
	callerID := s.callers.pick(agent, sc.phone, sc.callerID)
	due := now
	if sc.at != nil {
		due = *sc.at
	}
	h, err := s.orgHours(ctx, agent.OrgID)
	if err != nil {
		return Scheduled{}, "", err
	}
	if hw := hoursWindow(h, "", sc.callMeta, sc.phone); hw != nil {
		moved, err := moveIntoHours("scheduledAt", due, hw)
		if err != nil {
			return Scheduled{}, "", err
		}
		if !moved.Equal(due) {
			due = moved
			sc.at = &moved // a computed time is returned in scheduledAt
		}
	}
	stored, err := s.db.Calls.CreateCalls(ctx, []callstore.Call{{
		OrgID: agent.OrgID, AgentID: agent.ID, Status: callstore.CallInitiated, PhoneNumber: sc.phone,
		CallerID: callerID, ContactName: sc.name, ContactEmail: sc.email, Priority: sc.priority,
		ScheduledAt: sc.at, DueAt: due, MaxRetries: sc.policy.MaxRetries, RetryPolicy: policyJSON(sc.policy),
		Metadata: recordMetadata(sc.meta, callerID, sc.priority), CallMetadata: metadataJSON(sc.callMeta),
	}})
	if err != nil {
		return Scheduled{}, "", err
	}
	s.sched.Wake()
	msg := "Call initiated"
	if sc.at != nil {
		msg = "Call scheduled for " + formatTime(*sc.at)
	}
	return Scheduled{
		Agent:       AgentName{ID: agent.ID, Name: agent.Name},
		Contact:     ScheduledContact{Email: strPtr(sc.email), Name: strPtr(sc.name), Phone: sc.phone},
		ID:          stored[0].ID,
		ScheduledAt: timePtr(sc.at),
		Status:      stored[0].Status,
	}, msg, nil
}
