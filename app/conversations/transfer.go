package conversations

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/app/calltransfer"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
)

// transfer_call on a call spoken by another voice loop (a LiveKit Agents
// worker using agentd as its model, x-agentd-call-id naming the call):
// agentd offers and runs the tool itself, through the dialer that carries
// the call (dial.Transferrer, LiveKit's TransferSIPParticipant). Cold
// only: a warm transfer needs agentd to speak to the person, and on
// LiveKit the worker speaks.

func liveCall(c callstore.Call) dial.LiveCall {
	return dial.LiveCall{ID: c.ID, Dialer: c.Dialer, RoomID: c.RoomID, SIPParticipantID: c.SIPParticipantID}
}

// transferTool is transfer_call for this turn: the call's dialer can
// transfer it and the agent has destinations.
func (s *Service) transferTool(in runInput) (llm.Tool, bool) {
	if in.call.ID == "" || s.d.Transfer == nil || !s.d.Transfer.CanTransfer(liveCall(in.call)) {
		return llm.Tool{}, false
	}
	return calltransfer.Tool(calltransfer.Destinations(in.agent.Config))
}

// transferClash refuses a caller tool named transfer_call when agentd
// offers its own on the call: agentd could not tell whose call it got.
func transferClash(offered bool, tools []llm.Tool) error {
	for i, t := range tools {
		if offered && t.Name == calltransfer.ToolName {
			return errs.InvalidField(fmt.Sprintf("tools.%d.function.name", i),
				fmt.Sprintf("%q is the built-in tool agentd runs on this call (the agent has config.transferDestinations): rename the caller's tool", t.Name))
		}
	}
	return nil
}

// transferCall runs a transfer_call and records the attempt as agentd's
// own voice loop does: the call's transfers, call.transferred or
// call.transfer_failed, a transcript line. The model reads the outcome.
func (s *Service) transferCall(ctx context.Context, in runInput, c llm.ToolCall) string {
	d, reason, err := calltransfer.Parse(c.Arguments, calltransfer.Destinations(in.agent.Config))
	if err != nil {
		return toolError("%v", err)
	}
	att := calltransfer.Attempt{Destination: d.Name, Mode: d.Mode, Reason: reason, At: time.Now().UTC()}
	if att.Mode == "" {
		att.Mode = "cold"
	}
	if att.Mode == "warm" {
		att.Outcome = calltransfer.Unsupported
		att.Detail = "warm transfer is not available on LiveKit calls (cold transfers only)"
	} else {
		att.Method = "refer"
		err = s.d.Transfer.TransferCall(ctx, liveCall(in.call), d.Target())
		att.Outcome = calltransfer.Done
		if err != nil {
			att.Outcome = calltransfer.Outcome(err)
			att.Detail = calltransfer.Truncate(err.Error(), 300)
		}
	}
	s.d.Log.InfoContext(ctx, "transfer", "call", in.call.ID, "destination", d.Name, "mode", att.Mode, "outcome", att.Outcome, "err", err)
	s.recordTransfer(ctx, in, att)
	if att.Outcome != calltransfer.Done {
		return toolError("the transfer to %s did not go through (%s): %s. Tell the caller and offer other help.", d.Name, att.Outcome, att.Detail)
	}
	b, _ := json.Marshal(map[string]string{"outcome": att.Outcome, "destination": d.Name,
		"note": "The caller is now connected to " + d.Name + "; the call is over for you."})
	return string(b)
}

func (s *Service) recordTransfer(ctx context.Context, in runInput, att calltransfer.Attempt) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	b, ev, err := calltransfer.Record(att)
	if err == nil {
		err = in.calls.AppendTransfer(rctx, in.call.ID, b, ev, time.Now())
	}
	if err == nil {
		err = in.calls.AppendLiveTranscript(rctx, in.orgID, in.agent.ID, in.call.ID,
			[]callstore.TranscriptLine{{Role: "tool", Text: calltransfer.Note(att), At: time.Now()}})
	}
	if err != nil {
		s.d.Log.WarnContext(ctx, "transfer record", "call", in.call.ID, "err", err)
	}
}
