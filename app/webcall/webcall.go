// Package webcall runs a voice session from a browser on the same voice
// loop as a phone call (the dial.Talker, app/voice): the dashboard's Talk
// control (an organization's member or API key) and the widget's
// microphone (the page's origin, the visitor token and the widget's
// limits, plus a per-agent daily cap of voice minutes). Each session is a
// call record with direction web. The transport is the caller's (a
// dial.Media: dial/webvoice behind the WebSocket of app/api). No HTTP here.
package webcall

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentd/agentd/app/widget"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Agents reads an agent of an organization.
type Agents interface {
	GetAgent(ctx context.Context, orgID, id string) (agentstore.Agent, error)
}

// Calls keeps the sessions' call records (*callstore.Calls).
type Calls interface {
	StartWebCall(ctx context.Context, c callstore.Call, at time.Time) (callstore.Call, error)
	EndWebCall(ctx context.Context, id, status, reason string, at time.Time) error
	WebSeconds(ctx context.Context, agentID string, since, now time.Time) (float64, error)
	EndStaleWebCalls(ctx context.Context, before time.Time, limit time.Duration) (int, error)
}

// Deps are what the sessions use.
type Deps struct {
	Agents Agents
	Calls  Calls
	// Talker is the voice loop; nil when speech is not configured (every
	// session is then refused with 503).
	Talker dial.Talker
	Widget *widget.Service
	Log    *slog.Logger
}

// DefaultMaxDuration ends a browser session: a test call is short.
const DefaultMaxDuration = 15 * time.Minute

// Service starts browser voice sessions. Safe for concurrent use.
type Service struct {
	d      Deps
	maxDur time.Duration
}

// New builds the service; maxDuration 0 is DefaultMaxDuration.
func New(d Deps, maxDuration time.Duration) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if maxDuration <= 0 {
		maxDuration = DefaultMaxDuration
	}
	return &Service{d: d, maxDur: maxDuration}
}

// Grant is a session allowed to start: whose agent, for how long at most,
// and what the call record says of it.
type Grant struct {
	OrgID, AgentID string
	MaxDuration    time.Duration
	Label          string         // the call record's phone_number: who talks
	Meta           map[string]any // the call record's metadata
	done           func()
}

// Release gives back what the grant holds (the widget conversation's one
// session slot) when the session does not run after all; Run releases it
// itself. Safe to call more than once.
func (g Grant) Release() {
	if g.done != nil {
		g.done()
	}
}

var (
	errNotVoice = errs.New(errs.Forbidden, "voice is not enabled for this agent: set config.voiceEnabled on a chat agent")
	errNoSpeech = errs.New(errs.Unavailable, "voice is not configured on this server: set --stt and --tts (speech services)")
	errInactive = errs.New(errs.Conflict, "the agent is inactive")
)

// voiceAllowed: voice agents always; chat agents with config.voiceEnabled.
func voiceAllowed(a agentstore.Agent) bool {
	if a.Type == "voice" {
		return true
	}
	var c struct{ VoiceEnabled bool }
	json.Unmarshal(a.Config, &c)
	return a.Type == "chat" && c.VoiceEnabled
}

// Dashboard checks a session from the dashboard or the API: an agent of
// the caller's organization that may speak, on a server with speech.
func (s *Service) Dashboard(ctx context.Context, orgID, agentID, who string) (Grant, error) {
	a, err := s.d.Agents.GetAgent(ctx, orgID, agentID)
	if errors.Is(err, sqldb.ErrNotFound) {
		return Grant{}, errs.New(errs.NotFound, "agent not found")
	}
	if err != nil {
		return Grant{}, err
	}
	if !voiceAllowed(a) {
		return Grant{}, errNotVoice
	}
	if a.Status == "inactive" {
		return Grant{}, errInactive
	}
	if s.d.Talker == nil {
		return Grant{}, errNoSpeech
	}
	return Grant{OrgID: orgID, AgentID: a.ID, MaxDuration: s.maxDur, Label: "browser",
		Meta: map[string]any{"channel": "dashboard", "startedBy": who}}, nil
}

// Widget checks a visitor's session: the widget's rules (origin, token,
// voiceEnabled, rates, one at a time) and the agent's voice minutes of the
// UTC day; the session may last what is left of them.
func (s *Service) Widget(ctx context.Context, token, convID, origin, addr string) (Grant, error) {
	if s.d.Widget == nil {
		return Grant{}, errs.New(errs.Unavailable, "the chat widget is not available")
	}
	g, err := s.d.Widget.Voice(ctx, token, convID, origin, addr)
	if err != nil {
		return Grant{}, err
	}
	ok := false
	defer func() {
		if !ok {
			g.Done()
		}
	}()
	if s.d.Talker == nil {
		return Grant{}, errNoSpeech
	}
	now := s.d.Widget.Now()
	used, err := s.d.Calls.WebSeconds(ctx, g.AgentID, now.UTC().Truncate(24*time.Hour), now)
	if err != nil {
		return Grant{}, err
	}
	left := time.Duration(float64(g.MinutesPerDay)*60-used) * time.Second
	if left < 10*time.Second {
		return Grant{}, s.d.Widget.VoiceDayFull()
	}
	ok = true
	return Grant{OrgID: g.OrgID, AgentID: g.AgentID, MaxDuration: min(s.maxDur, left), Label: "widget visitor",
		Meta: map[string]any{"channel": "widget", "origin": origin, "conversationId": convID}, done: sync.OnceFunc(g.Done)}, nil
}

// Run records the session as a web call, lets the voice loop talk on m
// until it ends the call, ctx ends (the browser went away or hung up) or
// the maximum duration passes, and ends the record: completed, or failed
// with the loop's reason. started gets the call's id before the loop
// speaks; watch hears the transcript and latency live.
func (s *Service) Run(ctx context.Context, g Grant, m dial.Media, started func(callID string), watch func(dial.TalkEvent)) (dial.TalkEnd, error) {
	defer g.Release()
	// A session left active by a stopped process would count against the
	// day's minutes for ever: end those older than any session can be.
	if _, err := s.d.Calls.EndStaleWebCalls(ctx, time.Now().Add(-s.maxDur-2*time.Minute), s.maxDur); err != nil {
		s.d.Log.Warn("ending stale web calls", "err", err)
	}
	meta, _ := json.Marshal(g.Meta)
	c, err := s.d.Calls.StartWebCall(ctx, callstore.Call{OrgID: g.OrgID, AgentID: g.AgentID, PhoneNumber: g.Label, Metadata: meta}, time.Now())
	if err != nil {
		return dial.TalkEnd{}, err
	}
	if started != nil {
		started(c.ID)
	}
	tctx, cancel := context.WithTimeout(ctx, g.MaxDuration+5*time.Second)
	defer cancel()
	end := s.d.Talker.Talk(tctx, dial.Session{Call: dial.Call{ID: c.ID, OrgID: g.OrgID, AgentID: g.AgentID},
		Direction: "web", From: g.Label, To: "agent", Media: m, MaxDuration: g.MaxDuration, Watch: watch})
	status := callstore.CallCompleted
	if end.Reason != "" {
		status = callstore.CallFailed
	}
	ectx, ecancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer ecancel()
	if err := s.d.Calls.EndWebCall(ectx, c.ID, status, end.Reason, time.Now()); err != nil {
		s.d.Log.Warn("ending a web call", "call", c.ID, "err", err)
	}
	return end, nil
}
