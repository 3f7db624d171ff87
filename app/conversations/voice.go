package conversations

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/convstore"
)

// ToolEndCall is the built-in tool a voice agent hangs up with. It is
// offered on agentd's own voice calls only (app/voice), as a tool of the
// caller's: its call ends the turn and comes back to the loop, which
// hangs up once the answer's last sentence has played.
const ToolEndCall = "end_call"

var endCallTool = llm.Tool{Name: ToolEndCall,
	Description: "Hang up the phone call. Say goodbye first, in the same answer; the call ends once it has been said.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{}}`)}

// StartCall opens the conversation of a voice call (channel voice, one
// per call: the call's existing one is returned).
func (s *Service) StartCall(ctx context.Context, orgID, agentID, callID string) (View, error) {
	a, err := s.agent(ctx, orgID, agentID)
	if err != nil {
		return View{}, err
	}
	c, _, err := s.d.Store.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: a.ID, Channel: ChannelVoice, CallID: callID})
	if err != nil {
		return View{}, err
	}
	return NewView(c, nil), nil
}

// VoiceInput is one turn of a call: what the caller said and the call's
// own data for the model (names, purpose, notes), added to the
// instructions.
type VoiceInput struct {
	Content string
	Context string
	// Tools are the loop's own tools besides end_call (send_dtmf,
	// transfer_call): their calls end the turn and come back in Pending.
	Tools []llm.Tool
}

// VoiceAnswer is a turn's answer before it is spoken: the loop stores it
// (StoreVoiceTurn) with what was actually played.
type VoiceAnswer struct {
	Content   string
	ToolCalls []ToolCall // the tools agentd ran
	EndCall   bool       // the model called end_call
	// Pending are calls of VoiceInput.Tools for the loop to run; it adds
	// them, with their results, to ToolCalls before StoreVoiceTurn.
	Pending []llm.ToolCall
	res     result
}

// AnswerVoice runs one turn of a call's conversation as Send does (the
// agent's instructions, knowledge, listings and tools, the stored history)
// with end_call offered, and stores nothing.
func (s *Service) AnswerVoice(ctx context.Context, orgID, convID string, in VoiceInput, onDelta func(string)) (VoiceAnswer, error) {
	c, err := s.d.Store.Get(ctx, orgID, convID)
	if err != nil {
		return VoiceAnswer{}, convErr(err)
	}
	if err := checkContent(in.Content); err != nil {
		return VoiceAnswer{}, err
	}
	if c.Status != "active" {
		return VoiceAnswer{}, errs.New(errs.Conflict, "conversation has ended")
	}
	a, err := s.agent(ctx, orgID, c.AgentID)
	if err != nil {
		return VoiceAnswer{}, err
	}
	stored, err := s.d.Store.Messages(ctx, convID)
	if err != nil {
		return VoiceAnswer{}, err
	}
	if len(stored) > 0 && stored[0].Role == "assistant" {
		// The agent spoke first: the history the model sees starts at a
		// user message (fit), so the greeting goes with the call's data.
		in.Context = strings.TrimSpace(in.Context + "\nYou opened the call by saying: " + strconv.Quote(stored[0].Content))
	}
	if in.Context != "" {
		a.Instructions = strings.TrimSpace(a.Instructions) + "\n\n" + in.Context
	}
	history := make([]llm.Message, 0, len(stored))
	for _, m := range stored {
		history = append(history, llm.Message{Role: m.Role, Content: m.Content})
	}
	res, err := s.run(ctx, runInput{orgID: orgID, agent: a, convID: c.ID, callID: c.CallID,
		history: history, user: in.Content, callerTools: append([]llm.Tool{endCallTool}, in.Tools...), onDelta: onDelta})
	if err != nil {
		return VoiceAnswer{}, err
	}
	out := VoiceAnswer{Content: res.content, ToolCalls: res.toolCalls, res: res}
	for _, p := range res.pending {
		if p.Name == ToolEndCall {
			out.EndCall = true
		} else {
			out.Pending = append(out.Pending, p)
		}
	}
	return out, nil
}

// StoreVoiceTurn stores a call's turn: the caller's words (none for the
// agent's first message) and the answer as it was heard (spoken: the part
// played before the caller interrupted). The call's transcript is the
// loop's to write.
func (s *Service) StoreVoiceTurn(ctx context.Context, orgID, convID, user string, a VoiceAnswer, spoken string) error {
	var turn []convstore.Message
	if user != "" {
		turn = append(turn, convstore.Message{Role: "user", Content: user})
	}
	m := a.res.stored()
	m.Content = spoken
	if len(a.ToolCalls) > len(a.res.toolCalls) { // the loop ran its own tools
		m.ToolCalls, _ = json.Marshal(a.ToolCalls)
	}
	if spoken != "" || len(a.ToolCalls) > 0 {
		turn = append(turn, m)
	}
	if len(turn) == 0 {
		return nil
	}
	_, err := s.d.Store.AppendVoiceTurn(ctx, orgID, convID, turn)
	return convErr(err)
}

// EndCall ends a call's conversation.
func (s *Service) EndCall(ctx context.Context, orgID, convID string) error {
	_, err := s.d.Store.End(ctx, orgID, convID)
	return convErr(err)
}
