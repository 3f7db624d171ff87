package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/storage"
)

// callOutboundRequest is the body of POST /api/v1/calls/outbound.
type callOutboundRequest struct {
	AgentID     *string        `json:"agentId"`
	PhoneNumber *string        `json:"phoneNumber"`
	CallerID    *string        `json:"callerId"`
	Metadata    map[string]any `json:"metadata"`
	Priority    *int           `json:"priority"`
}

// callsError writes a 5xx of the call family whose message is meant for the
// client (writeError would replace it by the generic one) and logs cause.
func (s *Server) callsError(w http.ResponseWriter, r *http.Request, status int, msg string, cause error) {
	if cause != nil {
		s.log.ErrorContext(r.Context(), "call request failed", "request_id", requestID(r.Context()),
			"path", r.URL.Path, "err", cause)
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "code": status}})
}

// outboundCall is POST /api/v1/calls/outbound. Rules in API.md's order:
// validation; the agent exists in the organization, is a voice agent and is
// active; the call log is created and set to queued (one transaction: it is
// never seen initiated); the dial queue is woken (the dial event); 201.
func (s *Server) outboundCall(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req callOutboundRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	agentID, err := checkCallAgentID(req.AgentID)
	if err != nil {
		return err
	}
	phone, err := checkCallPhone("phoneNumber", req.PhoneNumber)
	if err != nil {
		return err
	}
	callerID, err := checkCallOptPhone("callerId", req.CallerID)
	if err != nil {
		return err
	}
	priority, err := checkCallPriority("priority", req.Priority, callDefaultPriority)
	if err != nil {
		return err
	}
	var meta map[string]any
	if req.Metadata != nil {
		meta = cleanCallValue(req.Metadata).(map[string]any)
	}
	agent, err := s.callAgent(r.Context(), r, agentID)
	if err != nil {
		return err
	}
	if agent.Type != "voice" {
		return badRequest("agent is not a voice agent (type " + agent.Type + ")")
	}
	if agent.Status != "active" {
		return badRequest("agent is not active (status " + agent.Status + ")")
	}
	if callerID == "" {
		if len(agent.PhoneNumbers) == 0 {
			return badRequest("agent has no phone number assigned: set callerId or give the agent a phone number")
		}
		callerID = agent.PhoneNumbers[0]
	}
	if s.calls.dialer == nil {
		s.callsError(w, r, http.StatusInternalServerError, "telephony service not configured", nil)
		return nil
	}
	now := s.now()
	calls, err := s.db.CreateCalls(r.Context(), []storage.Call{{
		OrgID: agent.OrgID, AgentID: agent.ID, Status: storage.CallQueued, PhoneNumber: phone,
		CallerID: callerID, Priority: priority, DueAt: now, StartedAt: &now,
		Metadata: callRecordMetadata(meta, callerID, priority),
	}})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		s.callsError(w, r, http.StatusInternalServerError, "queueing failed: the call could not be stored", err)
		return nil
	}
	s.calls.queue.Wake()
	c := calls[0]
	writeJSON(w, http.StatusCreated, map[string]any{
		"data": map[string]any{
			"id":          c.ID,
			"status":      c.Status,
			"agentId":     agent.ID,
			"phoneNumber": phone,
			"callerId":    callerID,
			"startedAt":   formatTime(now),
			"agent":       map[string]any{"id": agent.ID, "name": agent.Name, "type": agent.Type},
			"metadata":    c.Metadata,
		},
		"message": "Call queued",
	})
	return nil
}
