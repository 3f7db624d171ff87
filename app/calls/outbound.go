package calls

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
)

// OutboundRequest is the body of POST /api/v1/calls/outbound.
type OutboundRequest struct {
	AgentID     *string        `json:"agentId"`
	PhoneNumber *string        `json:"phoneNumber"`
	CallerID    *string        `json:"callerId"`
	Metadata    map[string]any `json:"metadata"`
	Priority    *int           `json:"priority"`
	// IgnoreCallingHours places the call outside the organization's
	// calling hours; only an owner or admin key may send it.
	IgnoreCallingHours bool `json:"ignoreCallingHours"`
}

// Queued is the answer to an outbound request. Its fields keep the
// alphabetical order the answer always had.
type Queued struct {
	Agent       RecordAgent     `json:"agent"`
	AgentID     string          `json:"agentId"`
	CallerID    string          `json:"callerId"`
	ID          string          `json:"id"`
	Metadata    json.RawMessage `json:"metadata"`
	PhoneNumber string          `json:"phoneNumber"`
	StartedAt   string          `json:"startedAt"`
	Status      string          `json:"status"`
}

// Outbound queues an immediate call. Rules in API.md's order: validation;
// the agent exists in the organization, is a voice agent and is active;
// the call log is created and set to queued (one transaction: it is never
// seen initiated); the dial queue is woken (the dial event).
func (s *Service) Outbound(ctx context.Context, c Caller, req OutboundRequest) (Queued, error) {
	agentID, err := checkAgentID(req.AgentID)
	if err != nil {
		return Queued{}, err
	}
	phone, err := checkPhone("phoneNumber", req.PhoneNumber)
	if err != nil {
		return Queued{}, err
	}
	callerID, err := checkOptPhone("callerId", req.CallerID)
	if err != nil {
		return Queued{}, err
	}
	priority, err := checkPriority("priority", req.Priority, DefaultPriority)
	if err != nil {
		return Queued{}, err
	}
	var meta map[string]any
	if req.Metadata != nil {
		meta = cleanValue(req.Metadata).(map[string]any)
	}
	agent, err := s.agent(ctx, c, agentID)
	if err != nil {
		return Queued{}, err
	}
	if agent.Type != "voice" {
		return Queued{}, invalid("agentId", "agent is not a voice agent (type "+agent.Type+")")
	}
	if agent.Status != "active" {
		return Queued{}, invalid("agentId", "agent is not active (status "+agent.Status+")")
	}
	if callerID == "" && len(agent.PhoneNumbers) == 0 {
		return Queued{}, invalid("callerId", "agent has no phone number assigned: set callerId or give the agent a phone number")
	}
	callerID = s.callers.pick(agent, phone, callerID)
	if req.IgnoreCallingHours && !c.CanOverride {
		return Queued{}, &errs.Error{Kind: errs.Forbidden, Field: "ignoreCallingHours",
			Message: "ignoreCallingHours needs an owner or admin key"}
	}
	if err := s.checkDNC(ctx, agent.OrgID, "phoneNumber", phone); err != nil {
		return Queued{}, err
	}
	now := s.now()
	var window dial.Window
	if req.IgnoreCallingHours {
		window.IgnoreCallingHours = true
	} else {
		h, err := s.orgHours(ctx, agent.OrgID)
		if err != nil {
			return Queued{}, err
		}
		if hw := hoursWindow(h, "", nil, phone); hw != nil && !dial.Allowed(now, dial.Window{}, hw) {
			return Queued{}, errOutsideHours("phoneNumber", phone, hw, now)
		}
	}
	if s.dialer == nil {
		// A server fault the client may read: its message is sent as is.
		return Queued{}, errs.New(errs.Internal, "telephony service not configured")
	}
	stored, err := s.db.Calls.CreateCalls(ctx, []callstore.Call{{
		OrgID: agent.OrgID, AgentID: agent.ID, Status: callstore.CallQueued, PhoneNumber: phone,
		CallerID: callerID, Priority: priority, DueAt: now, StartedAt: &now, Window: windowJSON(window),
		Metadata: recordMetadata(meta, callerID, priority),
	}})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return Queued{}, err
		}
		return Queued{}, errs.Wrap(errs.Internal, "queueing failed: the call could not be stored", err)
	}
	s.queue.Wake()
	call := stored[0]
	return Queued{
		Agent:   RecordAgent{ID: agent.ID, Name: agent.Name, Type: agent.Type},
		AgentID: agent.ID, CallerID: callerID, ID: call.ID, Metadata: call.Metadata,
		PhoneNumber: phone, StartedAt: formatTime(now), Status: call.Status,
	}, nil
}
