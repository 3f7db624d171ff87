package app

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/storage"
)

// callScheduleRequest is the body of POST /api/v1/calls/schedule.
type callScheduleRequest struct {
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

// callScheduled is a validated schedule request.
type callScheduled struct {
	agentID, phone, name, email, callerID string
	at                                    *time.Time // nil: immediate
	priority                              int
	policy                                dial.RetryPolicy
	callMeta, meta                        map[string]any
}

// validateCallSchedule checks and cleans a schedule request (no agent lookup).
func validateCallSchedule(req callScheduleRequest, now time.Time) (callScheduled, error) {
	var sc callScheduled
	var err error
	if sc.agentID, err = checkCallAgentID(req.AgentID); err != nil {
		return sc, err
	}
	if sc.phone, err = checkCallPhone("contactPhone", req.ContactPhone); err != nil {
		return sc, err
	}
	if sc.name, err = checkCallName("contactName", req.ContactName); err != nil {
		return sc, err
	}
	if sc.email, err = checkCallEmail("contactEmail", req.ContactEmail); err != nil {
		return sc, err
	}
	if sc.callerID, err = checkCallOptPhone("callerId", req.CallerID); err != nil {
		return sc, err
	}
	if sc.at, err = checkCallTime("scheduledAt", req.ScheduledAt); err != nil {
		return sc, err
	}
	if sc.at != nil && sc.at.Before(now) {
		t := now.Add(callPastShift)
		sc.at = &t
	}
	if sc.priority, err = checkCallPriority("priority", req.Priority, callDefaultPriority); err != nil {
		return sc, err
	}
	rc := dial.RetryConfig{MaxRetries: req.MaxRetries, RetryIntervals: req.RetryIntervals}
	for _, s := range req.RetrySchedule {
		rc.RetrySchedule = append(rc.RetrySchedule, cleanString(s))
	}
	if sc.policy, err = rc.Policy(); err != nil {
		return sc, callRetryError("", err)
	}
	if req.CallMetadata != nil {
		sc.callMeta = cleanCallValue(req.CallMetadata).(map[string]any)
		if err := checkCallMetadata("callMetadata", sc.callMeta); err != nil {
			return sc, err
		}
	}
	if req.Metadata != nil {
		sc.meta = cleanCallValue(req.Metadata).(map[string]any)
	}
	return sc, nil
}

// scheduleCall is POST /api/v1/calls/schedule.
func (s *Server) scheduleCall(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req callScheduleRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	now := s.now()
	sc, err := validateCallSchedule(req, now)
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
		ScheduledAt: sc.at, DueAt: due, MaxRetries: sc.policy.MaxRetries, RetryPolicy: callPolicyJSON(sc.policy),
		Metadata: callRecordMetadata(sc.meta, callerID, sc.priority), CallMetadata: callMetadataJSON(sc.callMeta),
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
			"contact":     map[string]any{"phone": sc.phone, "name": callOptString(sc.name), "email": callOptString(sc.email)},
		},
		"message": msg,
	})
	return nil
}

// callOptString is nil (JSON null) for "".
func callOptString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
