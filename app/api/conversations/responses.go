package conversations

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/api/sse"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
)

// rsUsage is usage in the Responses shape.
func rsUsage(u llm.Usage) map[string]any {
	return map[string]any{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens,
		"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}
}

func textPart(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

func messageItem(id, text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = []any{textPart(text)}
	}
	return map[string]any{"type": "message", "id": id, "status": status, "role": "assistant", "content": content}
}

func callItem(id string, c llm.ToolCall, args, status string) map[string]any {
	return map[string]any{"type": "function_call", "id": id, "call_id": c.ID, "name": c.Name, "arguments": args, "status": status}
}

// rsView is a response object; out is nil while it is in progress.
type rsView struct {
	id      string
	created int64
	req     rsRequest
	in      conversations.RespondInput
}

func (v rsView) object(status string, output []any, usage any) map[string]any {
	var prev, instr any
	if v.in.Previous != "" {
		prev = v.in.Previous
	}
	if v.req.Instructions != nil {
		instr = *v.req.Instructions
	}
	tools := []any{}
	for _, t := range v.req.Tools {
		tools = append(tools, t)
	}
	choice := any("auto")
	if len(v.req.ToolChoice) > 0 {
		choice = v.req.ToolChoice
	}
	return map[string]any{"id": v.id, "object": "response", "created_at": v.created, "status": status, "model": v.req.Model,
		"output": output, "usage": usage, "previous_response_id": prev, "instructions": instr, "tools": tools,
		"tool_choice": choice, "parallel_tool_calls": true, "store": v.in.Store, "metadata": map[string]any{},
		"error": nil, "incomplete_details": nil, "text": map[string]any{"format": map[string]string{"type": "text"}},
		"truncation": "disabled", "reasoning": map[string]any{"effort": nil, "summary": nil}, "background": false}
}

// outputItems are a finished response's items: the message (when it has
// text), then the calls of the caller's tools.
func outputItems(r conversations.Response) []any {
	out := []any{}
	if r.Content != "" || len(r.ToolCalls) == 0 {
		out = append(out, messageItem(conversations.ItemID(r.ID, "msg", 0), r.Content, "completed"))
	}
	for i, c := range r.ToolCalls {
		out = append(out, callItem(conversations.ItemID(r.ID, "fc", i), c, c.Arguments, "completed"))
	}
	return out
}

// Responses answers POST /api/v1/openai/responses (OpenAI's Responses
// API): model is an agent id; streamed as its typed events when asked.
func (h *Handlers) Responses(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	in, req, err := ParseResponsesRequest(body, strings.TrimSpace(r.Header.Get("x-agentd-call-id")))
	if err != nil {
		return err
	}
	if !req.Stream {
		res, err := h.d.Conv.Respond(r.Context(), httpx.OrgID(r), h.d.Calls, in, nil)
		if err != nil {
			return err
		}
		v := rsView{id: res.ID, created: time.Now().Unix(), req: req, in: in}
		o := v.object("completed", outputItems(res), rsUsage(res.Usage))
		o["output_text"] = res.Content
		writeJSON(w, http.StatusOK, o)
		return nil
	}
	release, err := h.streamSlot(r)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	return h.streamResponse(ctx, w, r, cancel, in, req)
}

// streamResponse writes the typed events: response.created and
// .in_progress first, the message item as its text comes, the function
// calls, then response.completed (or error and response.failed).
func (h *Handlers) streamResponse(ctx context.Context, w http.ResponseWriter, r *http.Request, cancel func(), in conversations.RespondInput, req rsRequest) error {
	ev := sse.NewOnFail(w, cancel)
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		ev.Event(typ, fields)
	}
	// The id is known only once the engine has stored the answer; the
	// stream names the response before, so the engine is given it.
	in.ResponseID = conversations.NewResponseID()
	v := rsView{id: in.ResponseID, created: time.Now().Unix(), req: req, in: in}
	msgID := conversations.ItemID(v.id, "msg", 0)
	started, text := false, ""
	begin := func() {
		if started {
			return
		}
		started = true
		send("response.output_item.added", map[string]any{"output_index": 0, "item": messageItem(msgID, "", "in_progress")})
		send("response.content_part.added", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": textPart("")})
	}
	opened := false
	open := func() {
		if opened {
			return
		}
		opened = true
		send("response.created", map[string]any{"response": v.object("in_progress", []any{}, nil)})
		send("response.in_progress", map[string]any{"response": v.object("in_progress", []any{}, nil)})
	}
	res, err := h.d.Conv.Respond(ctx, httpx.OrgID(r), h.d.Calls, in, func(d string) {
		open()
		begin()
		text += d
		send("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": d, "logprobs": []any{}})
	})
	switch {
	case err != nil && !ev.Open():
		return err
	case err != nil:
		st, msg := httpx.Status(err)
		eb := ErrorBody(&errs.Error{Message: msg}, st).(map[string]any)["error"].(map[string]any)
		send("error", map[string]any{"code": eb["type"], "message": msg, "param": nil})
		fail := v.object("failed", []any{}, nil)
		fail["error"] = map[string]any{"code": "server_error", "message": msg}
		send("response.failed", map[string]any{"response": fail})
		return nil
	}
	open()
	n := 0
	if res.Content != "" || len(res.ToolCalls) == 0 {
		begin()
		if text == "" && res.Content != "" {
			send("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": res.Content, "logprobs": []any{}})
		}
		send("response.output_text.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "text": res.Content, "logprobs": []any{}})
		send("response.content_part.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": textPart(res.Content)})
		send("response.output_item.done", map[string]any{"output_index": 0, "item": messageItem(msgID, res.Content, "completed")})
		n++
	}
	for i, c := range res.ToolCalls {
		id := conversations.ItemID(res.ID, "fc", i)
		send("response.output_item.added", map[string]any{"output_index": n, "item": callItem(id, c, "", "in_progress")})
		send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": n, "delta": c.Arguments})
		send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": n, "name": c.Name, "arguments": c.Arguments})
		send("response.output_item.done", map[string]any{"output_index": n, "item": callItem(id, c, c.Arguments, "completed")})
		n++
	}
	send("response.completed", map[string]any{"response": v.object("completed", outputItems(res), rsUsage(res.Usage))})
	return nil
}
