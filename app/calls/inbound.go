package calls

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Inbound calls: the dialers report calls that come in (dial.Inbound);
// each is recorded with direction inbound for the voice agent the called
// number is assigned to, answered (active) and ended by the dialer.

var _ dial.Inbound = (*Service)(nil)

// InboundStarted records an answered inbound call to the voice agent that
// has the called number (dial.ErrNoAgent when none has it).
func (s *Service) InboundStarted(ctx context.Context, in dial.InboundCall) (string, error) {
	to := clean.Phone(in.To)
	agent, err := s.db.Agents.VoiceAgentForNumber(ctx, to)
	if errors.Is(err, sqldb.ErrNotFound) {
		return "", dial.ErrNoAgent
	}
	if err != nil {
		return "", err
	}
	from := clean.Phone(in.From)
	if from == "" {
		from = "anonymous"
	}
	meta, _ := json.Marshal(map[string]any{"caller_id": from, "from_phone_number": from, "to_phone_number": to,
		"priority": DefaultPriority})
	at := in.At
	if at.IsZero() {
		at = s.now()
	}
	c, err := s.db.Calls.StartInboundCall(ctx, callstore.Call{OrgID: agent.OrgID, AgentID: agent.ID, PhoneNumber: from,
		CallerID: from, Dialer: in.Dialer, SIPParticipantID: in.Key, RoomID: in.RoomID, Metadata: meta}, at)
	if err != nil {
		return "", err
	}
	s.log.InfoContext(ctx, "inbound call", "call", c.ID, "agent", agent.ID, "from", from, "to", to, "dialer", in.Dialer)
	return c.ID, nil
}

// InboundEnded ends an inbound call (every one in the room when only the
// room is known: a LiveKit room_finished).
func (s *Service) InboundEnded(ctx context.Context, in dial.InboundCall, status, reason string) {
	at := in.At
	if at.IsZero() {
		at = s.now()
	}
	for range 100 {
		id, done, err := s.db.Calls.EndInboundCall(ctx, callstore.InboundEnd{Dialer: in.Dialer, SIPParticipantID: in.Key,
			RoomID: in.RoomID, Status: status, Reason: reason, EndedAt: at})
		if err != nil {
			s.log.ErrorContext(ctx, "end inbound call", "key", in.Key, "room", in.RoomID, "err", err)
			return
		}
		if !done {
			return
		}
		s.log.InfoContext(ctx, "inbound call ended", "call", id, "status", status)
		if in.Key != "" {
			return
		}
	}
}
