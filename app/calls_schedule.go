package app

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/storage"
)

// scheduleRequest is the body of POST /api/v1/calls/schedule.
type scheduleRequest struct {
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

// scheduledCall is a validated schedule request.
type scheduledCall struct {
	agentID, phone, name, email, callerID string
	at                                    *time.Time // nil: immediate
	priority                              int
	policy                                dial.RetryPolicy
	callMeta, meta                        map[string]any
}

// validateSchedule checks and cleans a schedule request (no agent lookup).
func validateSchedule(req scheduleRequest, now time.Time) (scheduledCall, error) {
	var sc scheduledCall
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
		t := now.Add(pastScheduleShift)
		sc.at = &t
	}
	if sc.priority, err = checkPriority("priority", req.Priority, defaultPriority); err != nil {
		return sc, err
	}
	rc := dial.RetryConfig{MaxRetries: req.MaxRetries, RetryIntervals: req.RetryIntervals}
	for _, s := range req.RetrySchedule {
		rc.RetrySchedule = append(rc.RetrySchedule, cleanString(s))
	}
	if sc.policy, err = rc.Policy(); err != nil {
		return sc, retryError("", err)
	}
	if req.CallMetadata != nil {
		sc.callMeta = cleanValue(req.CallMetadata).(map[string]any)
		if err := checkCallMetadata("callMetadata", sc.callMeta); err != nil {
			return sc, err
		}
	}
	if req.Metadata != nil {
		sc.meta = cleanValue(req.Metadata).(map[string]any)
	}
	return sc, nil
}

// scheduleCall is POST /api/v1/calls/schedule.
func (s *Server) scheduleCall(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req scheduleRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	now := s.now()
	sc, err := validateSchedule(req, now)
	if err != nil {
		return err
	}
	agent, err := s.callAgent(r.Context(), r, sc.agentID)
	if err != nil {
		return err
	}
	callerID, err := checkSchedulableAgent(agent, sc.callerID)
	if err != nil {
		return err
	}
	due := now
	if sc.at != nil {
		due = *sc.at
	}
	calls, err := s.db.CreateCalls(r.Context(), []storage.Call{{
		OrgID: agent.OrgID, AgentID: agent.ID, Status: storage.CallInitiated, PhoneNumber: sc.phone,
		CallerID: callerID, ContactName: sc.name, ContactEmail: sc.email, Priority: sc.priority,
		ScheduledAt: sc.at, DueAt: due, MaxRetries: sc.policy.MaxRetries, RetryPolicy: policyJSON(sc.policy),
		Metadata: recordMetadata(sc.meta, callerID, sc.priority), CallMetadata: callMetadataJSON(sc.callMeta),
	}})
	if err != nil {
		return err
	}
	s.calls.sched.Wake()
	c := calls[0]
	msg := "Call initiated"
	if sc.at != nil {
		msg = "Call scheduled for " + formatTime(*sc.at)
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"data": map[string]any{
			"id":          c.ID,
			"status":      c.Status,
			"scheduledAt": formatTimePtr(sc.at),
			"agent":       map[string]any{"id": agent.ID, "name": agent.Name},
			"contact":     map[string]any{"phone": sc.phone, "name": optString(sc.name), "email": optString(sc.email)},
		},
		"message": msg,
	})
	return nil
}

// optString is nil (JSON null) for "".
func optString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
