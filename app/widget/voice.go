package widget

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentd/agentd/internal/errs"
)

// DefaultVoiceMinutes is an agent's daily cap of widget voice minutes
// without config.maxVoiceMinutesPerDay.
const DefaultVoiceMinutes = 60

// VoiceGrant is what a visitor's voice session may use: the agent, and
// its daily cap of voice minutes (the caller sums the day's web calls).
type VoiceGrant struct {
	OrgID, AgentID, ConversationID string
	MinutesPerDay                  int
	// Done frees the conversation's one-session-at-a-time slot.
	Done func()
}

var errNoVoice = errs.New(errs.Forbidden, "voice is not enabled for this chat")

// Voice checks a visitor's voice session as a message is checked: the
// page's origin, the visitor token of the conversation, the agent's
// config.voiceEnabled, one session (or answer) at a time per
// conversation, and the per-visitor and per-address rates (a session
// counts as one message).
func (s *Service) Voice(ctx context.Context, token, convID, origin, addr string) (VoiceGrant, error) {
	c, _, err := s.visit(ctx, token, convID, origin)
	if err != nil {
		return VoiceGrant{}, err
	}
	a, err := s.d.Agents.GetAgentAnyOrg(ctx, c.AgentID)
	if err != nil {
		return VoiceGrant{}, err
	}
	var cfg struct {
		VoiceEnabled          bool
		MaxVoiceMinutesPerDay int
	}
	json.Unmarshal(a.Config, &cfg)
	if !cfg.VoiceEnabled {
		return VoiceGrant{}, errNoVoice
	}
	now := s.cfg.Now()
	if ok, after, err := s.take(ctx, s.visitor, "visitor", convID, now); err != nil {
		return VoiceGrant{}, err
	} else if !ok {
		return VoiceGrant{}, limited("too many messages; wait a moment", after)
	}
	if ok, after, err := s.take(ctx, s.address, "addr", addrKey(addr), now); err != nil {
		return VoiceGrant{}, err
	} else if !ok {
		return VoiceGrant{}, limited("too many messages from this address; wait a moment", after)
	}
	if !s.streams.begin(convID) {
		return VoiceGrant{}, limited("a voice session or an answer is already running in this conversation", time.Second)
	}
	g := VoiceGrant{OrgID: c.OrgID, AgentID: c.AgentID, ConversationID: convID, MinutesPerDay: cfg.MaxVoiceMinutesPerDay,
		Done: func() { s.streams.end(convID) }}
	if g.MinutesPerDay <= 0 {
		g.MinutesPerDay = DefaultVoiceMinutes
	}
	return g, nil
}

// VoiceDayFull is the 429 of an agent whose voice minutes of the UTC day
// are used up.
func (s *Service) VoiceDayFull() error {
	now := s.cfg.Now()
	midnight := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	return limited("this chat has used its voice minutes for today", midnight.Sub(now))
}

// Now is the widget's clock (tests move it).
func (s *Service) Now() time.Time { return s.cfg.Now() }
