package conversations

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/api/sse"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
)

// The OpenAI-compatible endpoint (/api/v1/openai): a voice worker points
// its OpenAI LLM plugin here with model = an agent id. Bodies and errors
// are in OpenAI's exact wire format, which its clients parse.

// ErrorBody is an error in OpenAI's shape; package app writes every
// error of the endpoint with it (its error family).
func ErrorBody(e *errs.Error, st int) any {
	typ := "invalid_request_error"
	switch {
	case st == http.StatusUnauthorized:
		typ = "authentication_error"
	case st == http.StatusForbidden:
		typ = "permission_error"
	case st == http.StatusNotFound:
		typ = "not_found_error"
	case st == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case st >= 500:
		typ = "api_error"
	}
	var code any
	if e.Code != "" {
		code = strings.ToLower(e.Code)
	}
	var param any
	if e.Field != "" {
		param = e.Field
	}
	return map[string]any{"error": map[string]any{"message": e.Message, "type": typ, "param": param, "code": code}}
}

// oaPart is one part of a message's content.
type oaPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// oaContent is content as a string, an array of parts, or null: its text,
// and the first part that is not text (image_url, input_audio, file), which
// the model path cannot take and so is refused rather than dropped.
type oaContent struct {
	text    string
	other   string // the type of the first part that is not text
	otherAt int
}

func (c *oaContent) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		c.text = s
		return nil
	}
	var parts []oaPart
	if err := json.Unmarshal(b, &parts); err != nil {
		return errs.InvalidField("messages.content", "must be a string or an array of text parts")
	}
	var sb strings.Builder
	for i, p := range parts {
		if p.Type != "text" && p.Type != "input_text" && c.other == "" {
			c.other, c.otherAt = p.Type, i
		}
		sb.WriteString(p.Text)
	}
	c.text = sb.String()
	return nil
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    oaContent    `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls"`
	ToolCallID string       `json:"tool_call_id"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaRequest struct {
	Model         string      `json:"model"`
	N             *int        `json:"n"`
	Logprobs      *bool       `json:"logprobs"`
	Messages      []oaMessage `json:"messages"`
	Stream        bool        `json:"stream"`
	Tools         []oaTool    `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// passThrough are the request fields given to the model as they are;
// any other unknown field is accepted and ignored.
var passThrough = []string{"temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "seed",
	"presence_penalty", "frequency_penalty", "tool_choice", "parallel_tool_calls", "user", "response_format"}

// completionInput reads a chat-completion body.
func (h *Handlers) completionInput(body []byte, callID string) (conversations.CompleteInput, oaRequest, error) {
	var req oaRequest
	if err := httpx.DecodeBytes(body, &req); err != nil {
		return conversations.CompleteInput{}, req, err
	}
	if req.Model == "" {
		return conversations.CompleteInput{}, req, errs.InvalidField("model", "required: the id of an agent (GET /api/v1/openai/models)")
	}
	// Fields agentd cannot honour are refused, not silently dropped.
	if req.N != nil && *req.N > 1 {
		return conversations.CompleteInput{}, req, errs.InvalidField("n", "agentd answers with one choice: n must be 1")
	}
	if req.Logprobs != nil && *req.Logprobs {
		return conversations.CompleteInput{}, req, errs.InvalidField("logprobs", "agentd does not return log probabilities: logprobs must be false")
	}
	in := conversations.CompleteInput{AgentID: req.Model, CallID: callID}
	roles := map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}
	for i, m := range req.Messages {
		if !roles[m.Role] {
			return in, req, errs.InvalidField("messages."+strconv.Itoa(i)+".role", "must be system, developer, user, assistant or tool")
		}
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		if m.Content.other != "" {
			return in, req, errs.InvalidField(fmt.Sprintf("messages.%d.content.%d.type", i, m.Content.otherAt),
				fmt.Sprintf("%q parts are not supported: agentd's model path takes text only", m.Content.other))
		}
		lm := llm.Message{Role: role, Content: m.Content.text, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		in.Messages = append(in.Messages, lm)
	}
	for i, t := range req.Tools {
		if t.Function.Name == "" {
			return in, req, errs.InvalidField("tools."+strconv.Itoa(i)+".function.name", "required")
		}
		in.Tools = append(in.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(body, &raw)
	for _, k := range passThrough {
		if v, ok := raw[k]; ok && string(v) != "null" {
			if in.Extra == nil {
				in.Extra = map[string]json.RawMessage{}
			}
			in.Extra[k] = v
		}
	}
	if len(in.Tools) == 0 {
		delete(in.Extra, "tool_choice") // about the caller's tools: none were sent
		delete(in.Extra, "parallel_tool_calls")
	}
	return in, req, nil
}

func wireCalls(cs []llm.ToolCall, indexed bool) []oaToolCall {
	out := make([]oaToolCall, 0, len(cs))
	for i, c := range cs {
		w := oaToolCall{ID: c.ID, Type: "function"}
		if indexed {
			idx := i
			w.Index = &idx
		}
		w.Function.Name, w.Function.Arguments = c.Name, c.Arguments
		out = append(out, w)
	}
	return out
}

func oaUsage(u llm.Usage) map[string]int {
	return map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
}

// ChatCompletions answers POST /api/v1/openai/chat/completions.
func (h *Handlers) ChatCompletions(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	in, req, err := h.completionInput(body, strings.TrimSpace(r.Header.Get("x-agentd-call-id")))
	if err != nil {
		return err
	}
	id, created := "chatcmpl-"+strings.ReplaceAll(uuid.NewString(), "-", ""), time.Now().Unix()
	if !req.Stream {
		c, err := h.d.Conv.Complete(r.Context(), httpx.OrgID(r), h.d.Calls, in, nil)
		if err != nil {
			return err
		}
		msg := map[string]any{"role": "assistant", "content": c.Content, "refusal": nil}
		if len(c.ToolCalls) > 0 {
			msg["tool_calls"] = wireCalls(c.ToolCalls, false)
			if c.Content == "" {
				msg["content"] = nil
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"system_fingerprint": nil, "usage": oaUsage(c.Usage),
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": c.FinishReason}}})
		return nil
	}
	release, err := h.streamSlot(r)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ev := sse.NewOnFail(w, cancel)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"system_fingerprint": nil, "choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	first := true
	c, err := h.d.Conv.Complete(ctx, httpx.OrgID(r), h.d.Calls, in, func(d string) {
		if first {
			ev.Event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
			first = false
		}
		ev.Event("", chunk(map[string]any{"content": d}, nil))
	})
	switch {
	case err != nil && !ev.Open():
		return err
	case err != nil:
		st, msg := httpx.Status(err)
		ev.Event("", ErrorBody(&errs.Error{Message: msg}, st))
		return nil
	}
	if first {
		ev.Event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	}
	if len(c.ToolCalls) > 0 {
		ev.Event("", chunk(map[string]any{"tool_calls": wireCalls(c.ToolCalls, true)}, nil))
	}
	ev.Event("", chunk(map[string]any{}, c.FinishReason))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		ev.Event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"system_fingerprint": nil, "choices": []any{}, "usage": oaUsage(c.Usage)})
	}
	ev.Event("", "[DONE]")
	return nil
}

// Models answers GET /api/v1/openai/models: the organization's agents
// that can answer (not inactive), each as a model.
func (h *Handlers) Models(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	data := []any{}
	for off := 0; ; off += 100 {
		as, more, err := h.d.Agents.ListAgents(r.Context(), httpx.OrgID(r), agentstore.AgentFilter{Limit: 100, Offset: off})
		if err != nil {
			return err
		}
		for _, a := range as {
			if a.Status != "inactive" {
				data = append(data, modelView(a))
			}
		}
		if !more {
			break
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
	return nil
}

func modelView(a agentstore.Agent) map[string]any {
	return map[string]any{"id": a.ID, "object": "model", "created": a.CreatedAt.Unix(), "owned_by": "agentd", "name": a.Name}
}

// Model answers GET /api/v1/openai/models/{id} (models.retrieve): the
// agent as a model; an inactive agent is not listed, so it is not found.
func (h *Handlers) Model(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	a, err := h.d.Conv.Agent(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if errs.Is(err, errs.Conflict) || errs.Is(err, errs.NotFound) {
		return errs.Wrap(errs.NotFound, "model not found: no agent "+p.ByName("id")+" that can answer (GET /api/v1/openai/models)", err)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, modelView(a))
	return nil
}
