package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// bearer does a request with the key as Authorization: Bearer, as OpenAI
// clients send it.
func (e *testEnv) bearer(method, path, key string, body any, header ...string) (int, []byte) {
	e.t.Helper()
	h := map[string]string{"Authorization": "Bearer " + key}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	code, _, b := e.doHeaders(method, path, h, body)
	return code, b
}

// The non-streaming answer is OpenAI's chat.completion; instructions and
// passages were added, unknown fields accepted, known ones passed through.
func TestOpenAICompletion(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Push(llmtest.Reply{Content: "We open at 7:00.", PromptTokens: 50, CompletionTokens: 6})
	code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{
		"model": e.agentID, "messages": []any{map[string]any{"role": "system", "content": "The caller is on the phone."},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "When does the bakery open?"}}}},
		"temperature": 0.3, "some_future_field": map[string]any{"x": 1}, "user": "u1"})
	var out struct {
		Object  string
		Model   string
		Choices []struct {
			Message struct {
				Role, Content string
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	json.Unmarshal(b, &out)
	if code != 200 || out.Object != "chat.completion" || out.Model != e.agentID || out.Choices[0].Message.Content != "We open at 7:00." ||
		out.Choices[0].FinishReason != "stop" || out.Usage.PromptTokens != 50 {
		t.Fatalf("%d %s", code, b)
	}
	got := e.model.Last()
	if !strings.Contains(got.Messages[0].Text(), "Lisbon bakery's assistant") || !strings.Contains(got.Messages[0].Text(), "opens at 7:00") {
		t.Fatalf("instructions and passage not added: %+v", got.Messages[0])
	}
	if got.Messages[1].Text() != "The caller is on the phone." || got.Messages[2].Text() != "When does the bakery open?" {
		t.Fatalf("the caller's messages: %+v", got.Messages)
	}
	var raw map[string]any
	json.Unmarshal(got.Body, &raw)
	if raw["temperature"] != 0.3 || raw["user"] != "u1" || raw["some_future_field"] != nil || raw["model"] != "scripted" {
		t.Fatalf("request to the model: %s", got.Body)
	}
	// No call id, nothing stored.
	var l conversationListBody
	e.doJSON("GET", "/api/v1/conversations", e.key, nil, &l)
	if l.Data.Total != 0 {
		t.Fatalf("stored without x-agentd-call-id: %+v", l)
	}
}

type conversationListBody struct {
	Data struct {
		Conversations []convView `json:"conversations"`
		Total         int        `json:"total"`
	} `json:"data"`
}

// The caller's own tools go to the model as they are; a call of one comes
// back in OpenAI's format (streamed), and agentd does not run it.
func TestOpenAICallerTools(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_9", Name: "hang_up", Arguments: `{"reason":"caller said goodbye"}`}}})
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "hang_up", "parameters": map[string]any{"type": "object"}}}}
	code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": e.agentID, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "Bye"}}, "tools": tools, "tool_choice": "auto", "parallel_tool_calls": false})
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	if !slicesContains(e.model.Last().ToolNames(), "hang_up") {
		t.Fatalf("tool not passed: %s", e.model.Last().Body)
	}
	var args strings.Builder
	var finish string
	done := false
	for _, ev := range readSSE(t, b) {
		if ev.data == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Object  string
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
		}
		json.Unmarshal([]byte(ev.data), &c)
		if c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %s", ev.data)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" && (tc.ID != "call_9" || tc.Function.Name != "hang_up") {
					t.Fatalf("tool call %+v", tc)
				}
				args.WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if !done || finish != "tool_calls" || args.String() != `{"reason":"caller said goodbye"}` {
		t.Fatalf("done %v finish %q args %q", done, finish, args.String())
	}
	if n := e.model.Requests.Load(); n != 1 {
		t.Fatalf("agentd ran the caller's tool: %d model requests", n)
	}
}

// x-agentd-call-id appends the turns to that call's conversation (the
// call's own agent answers); another organization's call is 404.
func TestOpenAICallTranscript(t *testing.T) {
	e := newConvEnv(t, true, nil, fastSim(time.Minute))
	call := e.voiceAgent(e.orgID)
	callID := e.outbound(e.key, call.ID, "+15550002222")
	for i, q := range []string{"When do you open?", "And close?"} {
		e.model.Push(llmtest.Reply{Content: "Answer " + q})
		code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": call.ID,
			"messages": []any{map[string]any{"role": "user", "content": q}}}, "x-agentd-call-id", callID)
		if code != 200 {
			t.Fatalf("turn %d: %d %s", i, code, b)
		}
	}
	var l conversationListBody
	e.doJSON("GET", "/api/v1/conversations", e.key, nil, &l)
	if l.Data.Total != 1 || l.Data.Conversations[0].Channel != "voice" || *l.Data.Conversations[0].CallID != callID {
		t.Fatalf("conversations %+v", l)
	}
	v := e.conversation(e.key, l.Data.Conversations[0].ID)
	if len(v.Messages) != 4 || v.Messages[2].Content != "And close?" || v.Messages[3].Content != "Answer And close?" {
		t.Fatalf("transcript %+v", v.Messages)
	}
	_, otherKey := e.newOrg("other")
	otherAgent := e.createAgent(otherKey, map[string]any{"name": "O", "type": "chat"})
	if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", otherKey, map[string]any{"model": otherAgent,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, "x-agentd-call-id", callID); code != 404 || !strings.Contains(string(b), "call not found") {
		t.Fatalf("another org's call: %d %s", code, b)
	}
}

// Errors are OpenAI's shape: missing key, unknown agent, bad body, model down.
func TestOpenAIErrors(t *testing.T) {
	e := newConvEnv(t, true, nil)
	for _, c := range []struct {
		key  string
		body any
		code int
		typ  string
	}{
		{"", map[string]any{"model": e.agentID}, 401, "authentication_error"},
		{e.key, map[string]any{"messages": []any{}}, 400, "invalid_request_error"},
		{e.key, "{", 400, "invalid_request_error"},
		{e.key, map[string]any{"model": "nope", "messages": []any{map[string]any{"role": "user", "content": "x"}}}, 404, "not_found_error"},
		{e.key, map[string]any{"model": e.agentID, "messages": []any{map[string]any{"role": "robot", "content": "x"}}}, 400, "invalid_request_error"},
	} {
		code, b := e.bearer("POST", "/api/v1/openai/chat/completions", c.key, c.body)
		var out struct {
			Error struct {
				Message, Type string
			}
		}
		json.Unmarshal(b, &out)
		if code != c.code || out.Error.Type != c.typ || out.Error.Message == "" {
			t.Errorf("%v: %d %s", c.body, code, b)
		}
	}
	e.model.Push(llmtest.Reply{Status: 500})
	code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": e.agentID, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "x"}}})
	if code != 502 || !strings.Contains(string(b), "model service") || !strings.Contains(string(b), `"type":"api_error"`) {
		t.Fatalf("model down: %d %s", code, b)
	}
	e.doJSON("DELETE", "/api/v1/agents/"+e.agentID, e.key, nil, nil)
	if code, b := e.bearer("POST", "/api/v1/openai/chat/completions", e.key, map[string]any{"model": e.agentID,
		"messages": []any{map[string]any{"role": "user", "content": "x"}}}); code != 409 {
		t.Fatalf("inactive agent: %d %s", code, b)
	}
	if code, b := e.bearer("GET", "/api/v1/openai/models", "", nil); code != 401 || !strings.Contains(string(b), "authentication_error") {
		t.Fatalf("models without a key: %d %s", code, b)
	}
	var models struct{ Data []struct{ ID string } }
	code, b = e.bearer("GET", "/api/v1/openai/models", e.key, nil)
	json.Unmarshal(b, &models)
	if code != 200 || len(models.Data) != 0 {
		t.Fatalf("an inactive agent is listed: %s", b)
	}
}

// The official openai npm client, streaming and not, against agentd.
func TestOpenAINodeClient(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Answer(func(r llmtest.Request) llmtest.Reply {
		if slicesContains(r.ToolNames(), "hang_up") {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_h", Name: "hang_up", Arguments: `{}`}}}
		}
		return llmtest.Reply{Content: "We open at seven.", PromptTokens: 40, CompletionTokens: 4}
	})
	out := nodeScript(t, "openai-node", "openai", "client.mjs",
		"AGENTD_BASE_URL="+e.url+"/api/v1/openai", "AGENTD_KEY="+e.key, "AGENTD_AGENT="+e.agentID)
	var got struct {
		Models []string
		Whole  struct {
			Content, Finish string
			Usage           struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		Stream struct {
			Content string
			Chunks  int
			Usage   *struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		ToolCall struct {
			Finish string
			Calls  []struct {
				ID       string
				Function struct{ Name, Arguments string }
			}
		}
		Error struct {
			Status  int
			Message string
		}
		Retrieved struct{ ID, Object string }
		Response  struct {
			ID, Text string
			Usage    struct {
				Total int `json:"total_tokens"`
			}
		}
		ResponseStream struct {
			Events     []string
			Text       string
			OutputText *string
			Usage      struct {
				Total int `json:"total_tokens"`
			}
		}
		FollowUp     struct{ Text, Previous string }
		ResponseCall []struct{ Name, CallID string }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	if len(got.Models) != 1 || got.Models[0] != e.agentID {
		t.Errorf("models %v", got.Models)
	}
	if got.Whole.Content != "We open at seven." || got.Whole.Finish != "stop" || got.Whole.Usage.TotalTokens != 44 {
		t.Errorf("whole %+v", got.Whole)
	}
	if got.Stream.Content != "We open at seven." || got.Stream.Chunks < 4 || got.Stream.Usage == nil || got.Stream.Usage.TotalTokens != 44 {
		t.Errorf("stream %+v", got.Stream)
	}
	if got.ToolCall.Finish != "tool_calls" || len(got.ToolCall.Calls) != 1 || got.ToolCall.Calls[0].Function.Name != "hang_up" {
		t.Errorf("tool call %+v", got.ToolCall)
	}
	if got.Error.Status != 404 || !strings.Contains(got.Error.Message, "agent not found") {
		t.Errorf("error %+v", got.Error)
	}
	if got.Retrieved.ID != e.agentID || got.Retrieved.Object != "model" {
		t.Errorf("models.retrieve %+v", got.Retrieved)
	}
	if !strings.HasPrefix(got.Response.ID, "resp_") || got.Response.Text != "We open at seven." || got.Response.Usage.Total != 44 {
		t.Errorf("responses.create %+v", got.Response)
	}
	ev := strings.Join(got.ResponseStream.Events, ",")
	if got.ResponseStream.Text != "We open at seven." || got.ResponseStream.Usage.Total != 44 || !strings.HasPrefix(ev, "response.created,response.in_progress,") ||
		!strings.HasSuffix(ev, ",response.output_item.done,response.completed") {
		t.Errorf("responses.create streamed %+v", got.ResponseStream)
	}
	if got.FollowUp.Text != "We open at seven." || got.FollowUp.Previous != got.Response.ID {
		t.Errorf("responses.stream with previous_response_id %+v", got.FollowUp)
	}
	if len(got.ResponseCall) != 1 || got.ResponseCall[0].Name != "hang_up" || got.ResponseCall[0].CallID != "call_h" {
		t.Errorf("responses.create with a tool %+v", got.ResponseCall)
	}
}

// doHeaders is do with the given headers instead of x-api-key.
func (e *testEnv) doHeaders(method, path string, header map[string]string, body any) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatalf("request: %v", err)
	}
	for k, v := range header {
		if v != "" && v != "Bearer " {
			req.Header.Set(k, v)
		}
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// A client that goes away cancels the model request, and the turn stores
// nothing.
func TestConversationClientGoneCancelsModel(t *testing.T) {
	e := newConvEnv(t, true, nil)
	id := e.startConversation(e.key, e.agentID)
	e.model.Push(llmtest.Reply{Content: "late", Delay: 1500 * time.Millisecond})
	body, _ := json.Marshal(map[string]any{"content": "When do you open?", "stream": true})
	req, _ := http.NewRequest("POST", e.url+"/api/v1/conversations/"+id+"/messages", bytes.NewReader(body))
	req.Header.Set("x-api-key", e.key)
	client := &http.Client{Timeout: 200 * time.Millisecond}
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d before the model did", resp.StatusCode)
	}
	waitFor(t, "the model request to be canceled", 2*time.Second, func() bool { return e.model.Canceled.Load() == 1 })
	// The check is that the abandoned turn is never stored: a non-event,
	// so give a late write the time it would take rather than wait for one.
	time.Sleep(100 * time.Millisecond)
	if v := e.conversation(e.key, id); v.MessageCount != 0 {
		t.Fatalf("stored %d messages of an abandoned turn", v.MessageCount)
	}
}
