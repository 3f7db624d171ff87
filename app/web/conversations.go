package web

import (
	"net/http"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/internal/errs"
)

// channels are the conversation channels the filter offers.
var channels = []string{conversations.ChannelWidget, conversations.ChannelAPI, conversations.ChannelVoice}

const conversationsPerPage = 50

type convFilter struct{ Agent, Channel, From, To string }

type conversationsData struct {
	Filter        convFilter
	Conversations []conversations.View
	AgentNames    map[string]string
	Agents        []agents.Agent
	Channels      []string
	Pager         pager
	Filtered      bool
}

// conversationsPage lists the organization's conversations, filtered by
// agent, channel and day; new ones arrive live (app.js follows
// conversation.started and conversation.ended).
func (s *Site) conversationsPage(w http.ResponseWriter, r *http.Request, u user) error {
	if s.f.Conversations == nil {
		return errs.New(errs.Unavailable, "conversations are not available")
	}
	q := r.URL.Query()
	f := convFilter{Agent: q.Get("agent"), Channel: q.Get("channel"), From: q.Get("from"), To: q.Get("to")}
	offset := pageParams(r)
	lq := conversations.ListQuery{AgentID: f.Agent, Limit: conversationsPerPage, Offset: offset}
	var bad error
	switch f.Channel {
	case "", conversations.ChannelWidget, conversations.ChannelAPI, conversations.ChannelVoice:
		lq.Channel = f.Channel
	default:
		bad = errs.InvalidField("channel", "must be widget, api or voice")
	}
	var badDay error
	if lq.From, lq.To, badDay = s.dayRange(f.From, f.To); badDay != nil {
		bad = badDay // the days' error wins, as it was checked last
	}
	ags, err := s.f.Agents.Pick(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	d := conversationsData{Filter: f, Agents: ags, Channels: channels, Filtered: f != convFilter{}, AgentNames: map[string]string{}}
	for _, a := range ags {
		d.AgentNames[a.ID] = a.Name
	}
	p := page{Title: "Conversations", Nav: "conversations", User: u, Data: &d}
	status, total := http.StatusOK, 0
	if bad == nil {
		d.Conversations, total, bad = s.f.Conversations.List(r.Context(), u.OrgID, lq)
	}
	if bad != nil {
		if errs.KindOf(bad) != errs.Invalid {
			return bad
		}
		p.Error, status = bad.(*errs.Error).Message, http.StatusBadRequest
	}
	d.Pager = newPager(r, offset, conversationsPerPage, len(d.Conversations), total, false)
	s.render(w, r, status, "conversations", p)
	return nil
}

type conversationData struct {
	Conversation conversations.View
	AgentName    string
}

// conversationPage is one conversation's transcript with each answer's
// citations and tool calls.
func (s *Site) conversationPage(w http.ResponseWriter, r *http.Request, u user) error {
	if s.f.Conversations == nil {
		return errs.New(errs.Unavailable, "conversations are not available")
	}
	v, err := s.f.Conversations.Get(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	d := conversationData{Conversation: v, AgentName: v.AgentID}
	if a, err := s.f.Agents.Get(r.Context(), u.OrgID, v.AgentID); err == nil {
		d.AgentName = a.Name
	}
	s.render(w, r, http.StatusOK, "conversation", page{Title: "Conversation", Nav: "conversations", User: u, Data: d})
	return nil
}
