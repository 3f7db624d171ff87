// Package calltransfer is the built-in transfer_call tool as both of its
// runners share it: agentd's own voice loop (app/voice, direct SIP) and
// the conversation engine on a LiveKit call (app/conversations, through
// the dialer's TransferSIPParticipant). The tool's definition, its
// arguments, the attempt as the call record keeps it and its event.
package calltransfer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/storage/callstore"
)

// ToolName hands the caller to a person of the agent's
// config.transferDestinations.
const ToolName = "transfer_call"

// Outcomes of an attempt (the call record's transfers[].outcome).
const (
	Done        = "transferred"
	NoAnswer    = "no_answer"
	Busy        = "busy"
	Machine     = "machine"
	Failed      = "failed"
	Unsupported = "unsupported"
)

// Destination is one of config.transferDestinations (app/agents
// validates them).
type Destination struct {
	Name        string `json:"name"`
	Number      string `json:"number,omitempty"`
	SIPURI      string `json:"sipUri,omitempty"`
	Description string `json:"description,omitempty"`
	Mode        string `json:"mode"`
}

// Target is the number (E.164) or the sip: URI to hand the caller to.
func (d Destination) Target() string {
	if d.Number != "" {
		return d.Number
	}
	return d.SIPURI
}

// Destinations reads config.transferDestinations of an agent's config.
func Destinations(config json.RawMessage) []Destination {
	var c struct {
		TransferDestinations []Destination `json:"transferDestinations"`
	}
	json.Unmarshal(config, &c)
	return c.TransferDestinations
}

// Attempt is one transfer as the call record shows it.
type Attempt struct {
	Destination string    `json:"destination"`
	Mode        string    `json:"mode"`
	Reason      string    `json:"reason,omitempty"`
	Method      string    `json:"method,omitempty"` // refer or bridge
	Outcome     string    `json:"outcome"`
	Detail      string    `json:"detail,omitempty"`
	At          time.Time `json:"at"`
}

// Record is the attempt as the calls store appends it and the event it
// writes with it (call.transferred or call.transfer_failed).
func Record(a Attempt) (json.RawMessage, string, error) {
	b, err := json.Marshal(a)
	ev := callstore.EventCallTransferFailed
	if a.Outcome == Done {
		ev = callstore.EventCallTransferred
	}
	return b, ev, err
}

// Note is the transcript's line for an attempt.
func Note(a Attempt) string {
	text := fmt.Sprintf("transfer_call: %s to %s (%s", a.Outcome, a.Destination, a.Mode)
	if a.Method != "" {
		text += ", " + a.Method
	}
	return text + ")"
}

// Tool is transfer_call offering dests (none: false).
func Tool(dests []Destination) (llm.Tool, bool) {
	if len(dests) == 0 {
		return llm.Tool{}, false
	}
	var names []string
	var b strings.Builder
	b.WriteString("Transfer the caller to a person. Say that you are transferring them first, in the same answer. Destinations:")
	for _, d := range dests {
		names = append(names, d.Name)
		fmt.Fprintf(&b, "\n- %s", d.Name)
		if d.Description != "" {
			fmt.Fprintf(&b, ": %s", d.Description)
		}
	}
	enum, _ := json.Marshal(names)
	return llm.Tool{Name: ToolName, Description: b.String(),
		Parameters: json.RawMessage(`{"type":"object","properties":{"destination":{"type":"string","enum":` + string(enum) +
			`},"reason":{"type":"string","description":"why the caller is transferred, for the person taking the call"}},"required":["destination"]}`)}, true
}

// Parse reads transfer_call's arguments: the destination named
// (case-insensitive) and the reason (one line, at most 500 characters).
func Parse(arguments string, dests []Destination) (Destination, string, error) {
	var args struct {
		Destination any `json:"destination"`
		Reason      any `json:"reason"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return Destination{}, "", errors.New("arguments must be a JSON object with destination")
	}
	name, _ := args.Destination.(string)
	name = strings.TrimSpace(name)
	var names []string
	for _, d := range dests {
		if strings.EqualFold(d.Name, name) {
			reason, _ := args.Reason.(string)
			return d, Truncate(strings.Join(strings.Fields(reason), " "), 500), nil
		}
		names = append(names, d.Name)
	}
	return Destination{}, "", fmt.Errorf("unknown destination %q (one of: %s)", Truncate(name, 100), strings.Join(names, ", "))
}

// Outcome is a failed transfer's outcome: busy or no answer when the
// dialer said so (a *dial.LegError), failed otherwise.
func Outcome(err error) string {
	var le *dial.LegError
	if errors.As(err, &le) {
		switch le.Status {
		case dial.StatusBusy:
			return Busy
		case dial.StatusNoAnswer:
			return NoAnswer
		}
	}
	return Failed
}

// Truncate cuts s to n characters (not bytes).
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
