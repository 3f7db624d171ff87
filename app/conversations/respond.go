package conversations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// The Responses API (OpenAI's POST /responses) on the same engine as a
// chat completion. A stored response keeps the whole context after it,
// so previous_response_id continues from there; its turns are appended
// to one conversation (channel api) that the conversation API shows.

// ResponseItem is one input item: a message, or a reference to an item of
// an earlier stored response (Ref, as a client sends item_reference).
type ResponseItem struct {
	Ref     string
	Message llm.Message
}

// RespondInput is a Responses request.
type RespondInput struct {
	AgentID      string
	CallID       string // x-agentd-call-id: the turn goes to that call's conversation
	Previous     string // previous_response_id
	Instructions string // the caller's, for this request only (not carried over)
	Input        []ResponseItem
	Tools        []llm.Tool
	Extra        map[string]json.RawMessage
	Store        bool   // keep the response for previous_response_id (the default)
	ResponseID   string // the id to give the answer ("": a new one), known before it streams
}

// NewResponseID is a new response id: "resp_" and 32 hex digits.
func NewResponseID() string { return "resp_" + strings.ReplaceAll(uuid.NewString(), "-", "") }

// Response is a Responses answer: ID is "resp_" + hex; its output items
// are named after it (ItemID).
type Response struct {
	ID             string
	ConversationID string // "" when not stored
	Previous       string
	Completion
}

// ItemID names the output items of response id: the message is msg_<hex>,
// the n-th function call fc_<hex>_<n>; an item_reference to either
// resolves to the response's answer.
func ItemID(responseID, kind string, n int) string {
	h := strings.TrimPrefix(responseID, "resp_")
	if kind == "fc" {
		return fmt.Sprintf("fc_%s_%d", h, n)
	}
	return "msg_" + h
}

// refResponse is the response an item id belongs to ("" if none).
func refResponse(item string) string {
	switch {
	case strings.HasPrefix(item, "msg_"):
		return "resp_" + item[4:]
	case strings.HasPrefix(item, "fc_"):
		h := item[3:]
		if i := strings.LastIndexByte(h, '_'); i > 0 {
			h = h[:i]
		}
		return "resp_" + h
	}
	return ""
}

// wireMessage is llm.Message as stored in a response's context.
type wireMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content,omitempty"`
	ToolCalls  []llm.ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string         `json:"toolCallId,omitempty"`
}

func encodeContext(ms []llm.Message) json.RawMessage {
	w := make([]wireMessage, len(ms))
	for i, m := range ms {
		w[i] = wireMessage{m.Role, m.Content, m.ToolCalls, m.ToolCallID}
	}
	b, _ := json.Marshal(w)
	return b
}

func decodeContext(b json.RawMessage) ([]llm.Message, error) {
	var w []wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	ms := make([]llm.Message, len(w))
	for i, m := range w {
		ms[i] = llm.Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return ms, nil
}

// stored reads a stored response of the organization and its agent; an
// unknown one (or another organization's) is a 400 naming the parameter,
// as OpenAI answers.
func (s *Service) storedResponse(ctx context.Context, orgID, agentID, id, param string) (convstore.Response, []llm.Message, error) {
	r, err := s.d.Store.GetResponse(ctx, orgID, id)
	if errors.Is(err, sqldb.ErrNotFound) || (err == nil && r.AgentID != agentID) {
		return r, nil, errs.InvalidField(param, fmt.Sprintf("no stored response %q for this model", id))
	}
	if err != nil {
		return r, nil, err
	}
	ms, err := decodeContext(r.Messages)
	return r, ms, err
}

// Respond answers a Responses request for an agent: the context of the
// previous response, then the input (item references resolved), then the
// turn as a chat completion runs it.
func (s *Service) Respond(ctx context.Context, orgID string, calls CallStore, in RespondInput, onDelta func(string)) (Response, error) {
	a, err := s.agent(ctx, orgID, in.AgentID)
	if err != nil {
		return Response{}, err
	}
	if err := toolClash(a, in.Tools); err != nil {
		return Response{}, err
	}
	var call callstore.Call
	if in.CallID != "" {
		if call, err = liveCallOf(ctx, calls, orgID, a.ID, in.CallID); err != nil {
			return Response{}, err
		}
	}
	run := runInput{orgID: orgID, agent: a, call: call, calls: calls}
	_, offered := s.transferTool(run)
	if err := transferClash(offered, in.Tools); err != nil {
		return Response{}, err
	}
	var msgs []llm.Message
	convID := ""
	if in.Previous != "" {
		prev, ms, err := s.storedResponse(ctx, orgID, a.ID, in.Previous, "previous_response_id")
		if err != nil {
			return Response{}, err
		}
		msgs, convID = ms, prev.ConversationID
		// An ended conversation takes no more turns: say so before the model runs.
		if c, err := s.d.Store.Get(ctx, orgID, convID); err != nil {
			return Response{}, convErr(err)
		} else if c.Status != "active" && in.CallID == "" && in.Store {
			return Response{}, errs.New(errs.Conflict, "conversation has ended: previous_response_id names a turn of an ended conversation")
		}
	}
	lastRef := ""
	for i, it := range in.Input {
		if it.Ref == "" {
			msgs = append(msgs, it.Message)
			lastRef = ""
			continue
		}
		id := refResponse(it.Ref)
		if id == lastRef { // the message and the calls of one answer: one message
			continue
		}
		_, ms, err := s.storedResponse(ctx, orgID, a.ID, id, fmt.Sprintf("input.%d.id", i))
		if err != nil {
			return Response{}, err
		}
		if len(ms) > 0 {
			msgs = append(msgs, ms[len(ms)-1])
		}
		lastRef = id
	}
	if len(msgs) == 0 {
		return Response{}, errs.InvalidField("input", "required: a string or at least one item")
	}
	for i, m := range msgs {
		if n := len(m.Content); n > MaxCompletionMessage {
			return Response{}, errs.InvalidField(fmt.Sprintf("input.%d.content", i),
				fmt.Sprintf("%d bytes, at most %d (conversations.MaxCompletionMessage)", n, MaxCompletionMessage))
		}
	}
	history, user := msgs, ""
	if last := msgs[len(msgs)-1]; last.Role == "user" {
		history, user = msgs[:len(msgs)-1], last.Content
	}
	query := user
	if query == "" {
		query = lastUser(history)
	}
	if in.Instructions != "" {
		history = append([]llm.Message{{Role: "system", Content: in.Instructions}}, history...)
	}
	switch {
	case in.CallID != "":
		c, _, err := s.d.Store.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: a.ID, Channel: ChannelVoice, CallID: in.CallID})
		if err != nil {
			return Response{}, err
		}
		convID = c.ID
	case in.Store && convID == "":
		c, _, err := s.d.Store.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: a.ID, Channel: ChannelAPI,
			Metadata: json.RawMessage(`{"api":"responses"}`)})
		if err != nil {
			return Response{}, err
		}
		convID = c.ID
	}
	run.convID, run.callID, run.history, run.user, run.query = convID, in.CallID, history, user, query
	run.callerTools, run.extra, run.onDelta = in.Tools, in.Extra, onDelta
	res, err := s.run(ctx, run)
	if err != nil {
		return Response{}, err
	}
	if in.ResponseID == "" {
		in.ResponseID = NewResponseID()
	}
	out := Response{ID: in.ResponseID, Previous: in.Previous,
		Completion: Completion{Content: res.content, ToolCalls: res.pending, FinishReason: res.finish, Usage: res.usage,
			Citations: nonNil(res.citations)}}
	if convID == "" {
		return out, nil
	}
	var turn []convstore.Message
	if user != "" {
		turn = append(turn, convstore.Message{Role: "user", Content: user})
	}
	if res.content != "" || len(res.toolCalls) > 0 {
		turn = append(turn, res.stored())
	}
	if !in.Store {
		if len(turn) > 0 {
			if _, err := s.d.Store.AppendTurn(ctx, orgID, convID, turn); err != nil {
				return Response{}, convErr(err)
			}
		}
		return out, nil
	}
	after := append(msgs[:len(msgs):len(msgs)], llm.Message{Role: "assistant", Content: res.content, ToolCalls: res.pending})
	if _, err := s.d.Store.AppendResponseTurn(ctx, orgID, convID, turn, convstore.Response{ID: out.ID, AgentID: a.ID,
		Messages: encodeContext(after)}); err != nil {
		return Response{}, convErr(err)
	}
	out.ConversationID = convID
	return out, nil
}
