package voice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
)

// The loop's own tools besides end_call. Their calls end the model's turn
// and come back to the loop, which runs them once the answer's speech has
// played (digits pressed over the agent's own voice would be lost).
const (
	ToolSendDTMF = "send_dtmf"
	// MaxDigits bounds one send_dtmf call (a menu path, an account number).
	MaxDigits = 32
)

var sendDTMFTool = llm.Tool{Name: ToolSendDTMF,
	Description: "Press keys on the phone keypad (DTMF), e.g. to choose an option in a phone menu. " +
		"The digits are sent after what you say in the same answer.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"digits":{"type":"string",` +
		`"description":"the keys to press in order: 0-9, *, #, A-D (at most 32)"}},"required":["digits"]}`)}

// ParseDigits reads send_dtmf's arguments: the digits to press, upper
// case, spaces dropped; an error the model can read otherwise.
func ParseDigits(arguments string) (string, error) {
	var args struct {
		Digits any `json:"digits"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return "", errors.New("arguments must be a JSON object with digits")
	}
	var raw string
	switch v := args.Digits.(type) {
	case string:
		raw = v
	case float64: // a model writing 1234 as a number
		if v < 0 || v != float64(int64(v)) {
			return "", errors.New("digits must be a string of 0-9, *, #, A-D")
		}
		raw = fmt.Sprintf("%d", int64(v))
	default:
		return "", errors.New("digits is required: a string of 0-9, *, #, A-D")
	}
	var b strings.Builder
	for _, r := range raw {
		switch {
		case r == ' ' || r == '-' || r == ',':
			continue
		case r >= '0' && r <= '9', r == '*', r == '#', r >= 'A' && r <= 'D':
			b.WriteRune(r)
		case r >= 'a' && r <= 'd':
			b.WriteRune(r - 'a' + 'A')
		default:
			return "", fmt.Errorf("%q is not a keypad key (0-9, *, #, A-D)", r)
		}
		if b.Len() > MaxDigits {
			return "", fmt.Errorf("at most %d digits at a time", MaxDigits)
		}
	}
	if b.Len() == 0 {
		return "", errors.New("digits is empty")
	}
	return b.String(), nil
}

// voiceTools are the tools the loop offers beside end_call.
func (c *call) voiceTools() []llm.Tool {
	tools := []llm.Tool{sendDTMFTool}
	if t, ok := c.transferTool(); ok {
		tools = append(tools, t)
	}
	return tools
}

// runPending runs the loop's tool calls of an answer that has played and
// adds them, with what the model reads back, to the answer's tool calls.
// interrupted: the caller spoke over the answer, nothing is run.
func (c *call) runPending(ctx context.Context, ans *conversations.VoiceAnswer, interrupted bool) (transfer *transferRequest) {
	for _, p := range ans.Pending {
		var result string
		switch {
		case interrupted:
			result = toolResult("error", "not done: the caller spoke first")
		case p.Name == ToolSendDTMF:
			result = c.sendDigits(ctx, p.Arguments)
		case p.Name == ToolTransferCall && transfer == nil:
			d, reason, err := ParseTransfer(p.Arguments, c.set.TransferDestinations)
			if err != nil {
				result = toolResult("error", err.Error())
				break
			}
			transfer = &transferRequest{dest: d, reason: reason}
			result = toolResult("status", "transferring to "+d.Name)
		default:
			result = toolResult("error", "unknown tool "+p.Name)
		}
		ans.ToolCalls = append(ans.ToolCalls, conversations.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments, Result: result})
		// The history the model reads holds words only: the next turn's
		// context says what the tool did.
		c.notes = append(c.notes, p.Name+" "+p.Arguments+" -> "+result)
	}
	return transfer
}

// takeNotes is the context of the next turn: the call's data and what
// the loop's tools did since the last turn.
func (c *call) takeNotes() string {
	if len(c.notes) == 0 {
		return c.context
	}
	n := "\nYour tool calls since the last turn and their results: " + strings.Join(c.notes, "; ")
	c.notes = nil
	return c.context + n
}

// sendDigits presses the keys of a send_dtmf call on the call's media.
func (c *call) sendDigits(ctx context.Context, arguments string) string {
	digits, err := ParseDigits(arguments)
	if err != nil {
		return toolResult("error", err.Error())
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.sess.Media.SendDigits(sctx, digits); err != nil {
		c.log.Warn("send_dtmf", "call", c.id, "err", err)
		return toolResult("error", "the keys could not be sent")
	}
	return toolResult("sent", digits)
}

func toolResult(k, v string) string {
	b, _ := json.Marshal(map[string]string{k: v})
	return string(b)
}
