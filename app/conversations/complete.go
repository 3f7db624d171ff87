package conversations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// MaxCompletionMessage bounds each message of a chat completion (bytes):
// voice turns are short, and a call's turns become its transcript (4 MiB
// messages were accepted and written into it).
const MaxCompletionMessage = 32 << 10

// liveCallOf checks that callID is a call of the organization's agent
// that has not ended: another organization's call or another agent's is
// not found (404, the same answer), an ended call a conflict (409): its
// transcript is final.
func liveCallOf(ctx context.Context, calls CallStore, orgID, agentID, callID string) (callstore.Call, error) {
	c, err := calls.GetCall(ctx, orgID, callID)
	if errors.Is(err, sqldb.ErrNotFound) || (err == nil && c.AgentID != agentID) {
		return callstore.Call{}, errs.New(errs.NotFound, "call not found")
	}
	if err != nil {
		return callstore.Call{}, err
	}
	if callstore.CallFinal(c.Status) {
		return callstore.Call{}, errs.New(errs.Conflict, fmt.Sprintf("call has ended (%s): turns are recorded on live calls only", c.Status))
	}
	return c, nil
}

// CallStore is the calls store as a turn on a live call uses it: the call
// checked to be the organization's, and a transfer_call recorded
// (transfer.go).
type CallStore interface {
	GetCall(ctx context.Context, orgID, id string) (callstore.Call, error)
	AppendTransfer(ctx context.Context, callID string, attempt json.RawMessage, event string, now time.Time) error
	AppendLiveTranscript(ctx context.Context, orgID, agentID, callID string, lines []callstore.TranscriptLine) error
}

// CompleteInput is a chat completion as a voice worker sends it: the
// whole conversation so far, the worker's own tools, and fields passed to
// the model as they are.
type CompleteInput struct {
	AgentID  string
	CallID   string // x-agentd-call-id: the turn is appended to that call's conversation
	Messages []llm.Message
	Tools    []llm.Tool
	Extra    map[string]json.RawMessage
}

// Completion is the answer of a chat completion.
type Completion struct {
	Content      string
	ToolCalls    []llm.ToolCall // calls of the caller's tools, for the caller to run
	FinishReason string         // stop or tool_calls
	Usage        llm.Usage
	Citations    []Citation
}

// Complete answers a chat completion for an agent: agentd adds the
// instructions and the passages and runs the agent's tools; the caller's
// tools go to the model as they are and their calls come back.
func (s *Service) Complete(ctx context.Context, orgID string, calls CallStore, in CompleteInput, onDelta func(string)) (Completion, error) {
	if len(in.Messages) == 0 {
		return Completion{}, errs.InvalidField("messages", "at least one message")
	}
	for i, m := range in.Messages {
		if n := len(m.Content); n > MaxCompletionMessage {
			return Completion{}, errs.InvalidField(fmt.Sprintf("messages.%d.content", i),
				fmt.Sprintf("%d bytes, at most %d (conversations.MaxCompletionMessage)", n, MaxCompletionMessage))
		}
	}
	a, err := s.agent(ctx, orgID, in.AgentID)
	if err != nil {
		return Completion{}, err
	}
	if err := toolClash(a, in.Tools); err != nil {
		return Completion{}, err
	}
	var call callstore.Call
	if in.CallID != "" {
		if call, err = liveCallOf(ctx, calls, orgID, a.ID, in.CallID); err != nil {
			return Completion{}, err
		}
	}
	run := runInput{orgID: orgID, agent: a, call: call, calls: calls}
	_, offered := s.transferTool(run)
	if err := transferClash(offered, in.Tools); err != nil {
		return Completion{}, err
	}
	history, user := in.Messages, ""
	if last := in.Messages[len(in.Messages)-1]; last.Role == "user" {
		history, user = in.Messages[:len(in.Messages)-1], last.Content
	}
	query := user
	if query == "" {
		query = lastUser(history)
	}
	var conv convstore.Conversation
	if in.CallID != "" {
		conv, _, err = s.d.Store.Create(ctx, convstore.Conversation{OrgID: orgID, AgentID: a.ID, Channel: ChannelVoice, CallID: in.CallID})
		if err != nil {
			return Completion{}, err
		}
	}
	run.convID, run.callID, run.history, run.user, run.query = conv.ID, in.CallID, history, user, query
	run.callerTools, run.extra, run.onDelta = in.Tools, in.Extra, onDelta
	res, err := s.run(ctx, run)
	if err != nil {
		return Completion{}, err
	}
	if conv.ID != "" {
		var turn []convstore.Message
		if user != "" {
			turn = append(turn, convstore.Message{Role: "user", Content: user})
		}
		if res.content != "" || len(res.toolCalls) > 0 {
			turn = append(turn, res.stored())
		}
		if len(turn) > 0 {
			if _, err := s.d.Store.AppendTurn(ctx, orgID, conv.ID, turn); err != nil {
				return Completion{}, convErr(err)
			}
		}
	}
	return Completion{Content: res.content, ToolCalls: res.pending, FinishReason: res.finish, Usage: res.usage,
		Citations: nonNil(res.citations)}, nil
}

// toolClash refuses a caller tool named like one agentd runs (its search
// tools, the agent's url tools): the model would see two tools under one
// name, and agentd could not tell whose call it got.
func toolClash(a agentstore.Agent, tools []llm.Tool) error {
	ours := agentTools(a)
	for i, t := range tools {
		_, agents := ours[t.Name]
		if t.Name == toolSearchKnowledge || t.Name == toolSearchListings || agents {
			return errs.InvalidField(fmt.Sprintf("tools.%d.function.name", i),
				fmt.Sprintf("%q is the name of a tool agentd runs for this agent: rename the caller's tool", t.Name))
		}
	}
	return nil
}
