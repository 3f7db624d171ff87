package conversations

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
)

// A Responses request body (OpenAI's POST /responses), read into the
// engine's input. Items agentd cannot honour are refused naming the
// parameter, never dropped.

// rsItem is one input item: a message (type "message" or none), a
// function_call, a function_call_output or an item_reference.
type rsItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type rsTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

type rsRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Stream             bool            `json:"stream"`
	Store              *bool           `json:"store"`
	Tools              []rsTool        `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Background         bool            `json:"background"`
	Conversation       json.RawMessage `json:"conversation"`
	Text               *struct {
		Format json.RawMessage `json:"format"`
	} `json:"text"`
}

// rsPassThrough are fields given to the model as they are, under the chat
// completion's name.
var rsPassThrough = map[string]string{"temperature": "temperature", "top_p": "top_p",
	"max_output_tokens": "max_tokens", "parallel_tool_calls": "parallel_tool_calls", "user": "user", "seed": "seed"}

// partsText reads message content: a string or parts of text
// (input_text, output_text, text); image, file and audio parts are refused.
func partsText(raw json.RawMessage, field string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errs.InvalidField(field, "must be a string or an array of text parts")
	}
	var sb strings.Builder
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			sb.WriteString(p.Text)
		default:
			return "", errs.InvalidField(fmt.Sprintf("%s.%d.type", field, j),
				fmt.Sprintf("%q parts are not supported: agentd's model path takes text only", p.Type))
		}
	}
	return sb.String(), nil
}

// ParseResponsesRequest reads a Responses body (exported for the fuzz
// target): the engine's input and the request as sent.
func ParseResponsesRequest(body []byte, callID string) (conversations.RespondInput, rsRequest, error) {
	var req rsRequest
	if err := httpx.DecodeBytes(body, &req); err != nil {
		return conversations.RespondInput{}, req, err
	}
	in := conversations.RespondInput{AgentID: req.Model, CallID: callID, Store: req.Store == nil || *req.Store}
	switch {
	case req.Model == "":
		return in, req, errs.InvalidField("model", "required: the id of an agent (GET /api/v1/openai/models)")
	case req.Background:
		return in, req, errs.InvalidField("background", "agentd answers in the request: background must be false")
	case len(req.Conversation) > 0 && string(req.Conversation) != "null":
		return in, req, errs.InvalidField("conversation", "not supported: continue with previous_response_id")
	}
	if req.Instructions != nil {
		in.Instructions = *req.Instructions
	}
	if req.PreviousResponseID != nil {
		in.Previous = *req.PreviousResponseID
		if in.Previous == "" {
			return in, req, errs.InvalidField("previous_response_id", "must not be empty")
		}
	}
	items, err := inputItems(req.Input)
	if err != nil {
		return in, req, err
	}
	in.Input = items
	for i, t := range req.Tools {
		if t.Type != "function" {
			return in, req, errs.InvalidField(fmt.Sprintf("tools.%d.type", i),
				fmt.Sprintf("%q tools are not supported: agentd runs the agent's own tools; send function tools", t.Type))
		}
		if t.Name == "" {
			return in, req, errs.InvalidField(fmt.Sprintf("tools.%d.name", i), "required")
		}
		in.Tools = append(in.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(body, &raw)
	extra := map[string]json.RawMessage{}
	for k, to := range rsPassThrough {
		if v, ok := raw[k]; ok && string(v) != "null" {
			extra[to] = v
		}
	}
	if len(in.Tools) == 0 {
		delete(extra, "parallel_tool_calls")
	} else if tc := toolChoice(req.ToolChoice); tc != nil {
		extra["tool_choice"] = tc
	}
	if req.Text != nil && len(req.Text.Format) > 0 {
		if rf := responseFormat(req.Text.Format); rf != nil {
			extra["response_format"] = rf
		}
	}
	if len(extra) > 0 {
		in.Extra = extra
	}
	return in, req, nil
}

// inputItems reads input: a string (one user message) or a list of items.
func inputItems(raw json.RawMessage) ([]conversations.ResponseItem, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []conversations.ResponseItem{{Message: llm.Message{Role: "user", Content: s}}}, nil
	}
	var items []rsItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errs.InvalidField("input", "must be a string or an array of items")
	}
	var out []conversations.ResponseItem
	for i, it := range items {
		at := fmt.Sprintf("input.%d", i)
		switch it.Type {
		case "message", "":
			role := it.Role
			switch role {
			case "developer":
				role = "system"
			case "system", "user", "assistant":
			default:
				return nil, errs.InvalidField(at+".role", "must be user, assistant, system or developer")
			}
			text, err := partsText(it.Content, at+".content")
			if err != nil {
				return nil, err
			}
			out = append(out, conversations.ResponseItem{Message: llm.Message{Role: role, Content: text}})
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, errs.InvalidField(at, "a function_call needs call_id and name")
			}
			call := llm.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
			// Calls after an answer's text (or after other calls) are that
			// one assistant message, as a chat completion carries them.
			if n := len(out); n > 0 && out[n-1].Ref == "" && out[n-1].Message.Role == "assistant" {
				out[n-1].Message.ToolCalls = append(out[n-1].Message.ToolCalls, call)
				continue
			}
			out = append(out, conversations.ResponseItem{Message: llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{call}}})
		case "function_call_output":
			if it.CallID == "" {
				return nil, errs.InvalidField(at+".call_id", "required")
			}
			text, err := partsText(it.Output, at+".output")
			if err != nil {
				return nil, err
			}
			out = append(out, conversations.ResponseItem{Message: llm.Message{Role: "tool", Content: text, ToolCallID: it.CallID}})
		case "item_reference":
			if it.ID == "" {
				return nil, errs.InvalidField(at+".id", "required")
			}
			out = append(out, conversations.ResponseItem{Ref: it.ID})
		case "reasoning":
			// agentd's answers carry none; a client echoing one loses nothing.
		default:
			return nil, errs.InvalidField(at+".type", fmt.Sprintf("%q items are not supported (message, function_call, function_call_output, item_reference)", it.Type))
		}
	}
	return out, nil
}

// toolChoice turns the Responses form ({"type":"function","name":...})
// into the chat completion's; "auto", "none" and "required" are the same.
func toolChoice(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return raw
	}
	var f struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &f) != nil || f.Type != "function" || f.Name == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": f.Name}})
	return b
}

// responseFormat turns text.format into the chat completion's
// response_format (json_schema and json_object; text is the default).
func responseFormat(raw json.RawMessage) json.RawMessage {
	var f struct {
		Type   string          `json:"type"`
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	var v any
	switch f.Type {
	case "json_object":
		v = map[string]string{"type": "json_object"}
	case "json_schema":
		js := map[string]any{"name": f.Name, "schema": f.Schema}
		if f.Strict != nil {
			js["strict"] = *f.Strict
		}
		v = map[string]any{"type": "json_schema", "json_schema": js}
	default:
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}
