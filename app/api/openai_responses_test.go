package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/llmtest"
)

type rsOut struct {
	ID       string  `json:"id"`
	Object   string  `json:"object"`
	Status   string  `json:"status"`
	Previous *string `json:"previous_response_id"`
	Output   []struct {
		Type, ID, Name, Arguments string
		CallID                    string `json:"call_id"`
		Content                   []struct{ Type, Text string }
	} `json:"output"`
	OutputText string `json:"output_text"`
	Usage      struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
		Total  int `json:"total_tokens"`
	} `json:"usage"`
}

func (e *convEnv) respond(t *testing.T, body map[string]any) (int, rsOut, []byte) {
	t.Helper()
	code, b := e.bearer("POST", "/api/v1/openai/responses", e.key, body)
	var out rsOut
	json.Unmarshal(b, &out)
	return code, out, b
}

// The Responses API, not streamed: the agent's instructions and passages
// added, the caller's instructions for this request, previous_response_id
// continuing a stored conversation, a caller tool's call returned as a
// function_call item and its output accepted, usage counted when the
// model sends none, and refusals in OpenAI's shape.
func TestOpenAIResponses(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Push(llmtest.Reply{Content: "We open at 7:00.", NoUsage: true})
	code, first, b := e.respond(t, map[string]any{"model": e.agentID, "input": "When does the bakery open?",
		"instructions": "Answer in one sentence.", "temperature": 0.2, "max_output_tokens": 50, "some_future_field": 1})
	if code != 200 || first.Object != "response" || first.Status != "completed" || !strings.HasPrefix(first.ID, "resp_") ||
		len(first.Output) != 1 || first.Output[0].Type != "message" || first.Output[0].Content[0].Text != "We open at 7:00." ||
		first.OutputText != "We open at 7:00." || first.Usage.Input == 0 || first.Usage.Output == 0 {
		t.Fatalf("%d %s", code, b)
	}
	got := e.model.Last()
	if !strings.Contains(got.Messages[0].Text(), "Lisbon bakery's assistant") || !strings.Contains(got.All(), "opens at 7:00") ||
		!strings.Contains(got.All(), "Answer in one sentence.") || !bytes.Contains(got.Body, []byte(`"max_tokens":50`)) {
		t.Fatalf("request to the model: %s", got.Body)
	}

	// The next turn names the first: the model sees it, the caller's
	// instructions are not carried over, and the conversation has both turns.
	e.model.Push(llmtest.Reply{Content: "On Sundays we are closed.", PromptTokens: 30, CompletionTokens: 6})
	code, second, b := e.respond(t, map[string]any{"model": e.agentID, "previous_response_id": first.ID, "input": "And on Sundays?"})
	if code != 200 || second.Previous == nil || *second.Previous != first.ID || second.Usage.Total != 36 {
		t.Fatalf("second: %d %s", code, b)
	}
	all := e.model.Last().All()
	if !strings.Contains(all, "When does the bakery open?") || !strings.Contains(all, "We open at 7:00.") || strings.Contains(all, "Answer in one sentence.") {
		t.Fatalf("second turn's context: %s", all)
	}
	var convs struct {
		Data struct {
			Conversations []struct {
				ID           string `json:"id"`
				MessageCount int    `json:"messageCount"`
			} `json:"conversations"`
		} `json:"data"`
	}
	e.doJSON("GET", "/api/v1/conversations?agentId="+e.agentID, e.key, nil, &convs)
	if len(convs.Data.Conversations) != 1 || convs.Data.Conversations[0].MessageCount != 4 {
		t.Fatalf("conversations: %+v", convs)
	}

	// A caller tool: its call comes back as a function_call item; the
	// output goes back with previous_response_id and the model sees both.
	tools := []any{map[string]any{"type": "function", "name": "book_table", "description": "Book a table",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"people": map[string]any{"type": "integer"}}}}}
	e.model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "book_table", Arguments: `{"people":2}`}}})
	code, call, b := e.respond(t, map[string]any{"model": e.agentID, "previous_response_id": second.ID, "input": "A table for two, please.", "tools": tools})
	if code != 200 || len(call.Output) != 1 || call.Output[0].Type != "function_call" || call.Output[0].CallID != "call_1" ||
		call.Output[0].Name != "book_table" || call.Output[0].Arguments != `{"people":2}` || !strings.HasPrefix(call.Output[0].ID, "fc_") {
		t.Fatalf("function call: %d %s", code, b)
	}
	e.model.Push(llmtest.Reply{Content: "Booked for two."})
	code, done, b := e.respond(t, map[string]any{"model": e.agentID, "previous_response_id": call.ID, "tools": tools,
		"input": []any{map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "booked: table 4"}}})
	if code != 200 || done.OutputText != "Booked for two." {
		t.Fatalf("after the output: %d %s", code, b)
	}
	last := e.model.Last()
	var sawCall, sawOutput bool
	for _, m := range last.Messages {
		sawCall = sawCall || (m.Role == "assistant" && len(m.ToolCalls) == 1 && m.ToolCalls[0].ID == "call_1")
		sawOutput = sawOutput || (m.Role == "tool" && m.ToolCallID == "call_1" && m.Text() == "booked: table 4")
	}
	if !sawCall || !sawOutput {
		t.Fatalf("the round trip's messages: %s", last.Body)
	}

	// An item_reference to an earlier answer resolves to its text.
	e.model.Push(llmtest.Reply{Content: "Yes."})
	if code, _, b := e.respond(t, map[string]any{"model": e.agentID, "input": []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "When do you open?"}}},
		map[string]any{"type": "item_reference", "id": first.Output[0].ID},
		map[string]any{"role": "user", "content": "Sure?"}}}); code != 200 || !strings.Contains(e.model.Last().All(), "We open at 7:00.") {
		t.Fatalf("item_reference: %d %s", code, b)
	}

	// Refusals, in OpenAI's error shape, naming the parameter.
	for _, c := range []struct {
		body  map[string]any
		code  int
		param string
	}{
		{map[string]any{"model": e.agentID, "previous_response_id": "resp_nope", "input": "hi"}, 400, "previous_response_id"},
		{map[string]any{"model": e.agentID, "input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_image", "image_url": "https://x/y.png"}}}}}, 400, "input.0.content.0.type"},
		{map[string]any{"model": e.agentID, "input": "hi", "tools": []any{map[string]any{"type": "web_search"}}}, 400, "tools.0.type"},
		{map[string]any{"model": e.agentID, "input": "hi", "tools": []any{map[string]any{"type": "function", "name": "search_knowledge"}}}, 400, "tools.0.function.name"},
		{map[string]any{"model": e.agentID, "input": []any{map[string]any{"type": "computer_call"}}}, 400, "input.0.type"},
		{map[string]any{"model": e.agentID}, 400, "input"},
		{map[string]any{"input": "hi"}, 400, "model"},
		{map[string]any{"model": "no-such-agent", "input": "hi"}, 404, ""},
	} {
		code, b := e.bearer("POST", "/api/v1/openai/responses", e.key, c.body)
		var eb struct {
			Error struct{ Type, Message, Param string }
		}
		json.Unmarshal(b, &eb)
		if code != c.code || eb.Error.Message == "" || eb.Error.Param != c.param {
			t.Errorf("%v: %d %s", c.body, code, b)
		}
	}
}

// Streamed, the answer is the typed events in order, with usage counted
// when the model sends none, and function calls as their own items.
func TestOpenAIResponsesStream(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Push(llmtest.Reply{Content: "We open at seven every day.", NoUsage: true})
	events, data := e.rsStream(t, map[string]any{"model": e.agentID, "input": "When does the bakery open?", "stream": true})
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta"}
	for i, w := range want {
		if i >= len(events) || events[i] != w {
			t.Fatalf("events %v, want %v first", events, want)
		}
	}
	tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if n := len(events); n < len(tail) || strings.Join(events[n-len(tail):], ",") != strings.Join(tail, ",") {
		t.Fatalf("events %v, want %v last", events, tail)
	}
	var text strings.Builder
	for i, ev := range events {
		if ev == "response.output_text.delta" {
			var d struct{ Delta string }
			json.Unmarshal(data[i], &d)
			text.WriteString(d.Delta)
		}
		var seq struct {
			Seq int `json:"sequence_number"`
		}
		json.Unmarshal(data[i], &seq)
		if seq.Seq != i {
			t.Fatalf("event %d has sequence_number %d", i, seq.Seq)
		}
	}
	var completed struct{ Response rsOut }
	json.Unmarshal(data[len(data)-1], &completed)
	if text.String() != "We open at seven every day." || completed.Response.Usage.Input == 0 || completed.Response.Usage.Output == 0 ||
		completed.Response.Output[0].Content[0].Text != text.String() {
		t.Fatalf("text %q, completed %s", text.String(), data[len(data)-1])
	}

	e.model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_9", Name: "hang_up", Arguments: `{"reason":"done"}`}}})
	events, data = e.rsStream(t, map[string]any{"model": e.agentID, "input": "Bye", "stream": true,
		"tools": []any{map[string]any{"type": "function", "name": "hang_up", "parameters": map[string]any{"type": "object"}}}})
	joined := strings.Join(events, ",")
	if !strings.Contains(joined, "response.output_item.added,response.function_call_arguments.delta,response.function_call_arguments.done,response.output_item.done,response.completed") ||
		strings.Contains(joined, "output_text") {
		t.Fatalf("function call events: %v", events)
	}
	if !bytes.Contains(data[len(data)-2], []byte(`"call_id":"call_9"`)) {
		t.Fatalf("function call item: %s", data[len(data)-2])
	}

	// The model down before the first event: a plain 502 in OpenAI's shape.
	e.model.Push(llmtest.Reply{Status: 500})
	code, b := e.bearer("POST", "/api/v1/openai/responses", e.key, map[string]any{"model": e.agentID, "input": "x", "stream": true})
	if code != 502 || !strings.Contains(string(b), "model service") || !strings.Contains(string(b), `"type":"api_error"`) {
		t.Fatalf("model down: %d %s", code, b)
	}
}

// rsStream posts a streamed Responses request and reads its events.
func (e *convEnv) rsStream(t *testing.T, body map[string]any) (events []string, data [][]byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.url+"/api/v1/openai/responses", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			d := []byte(strings.TrimPrefix(line, "data: "))
			var typ struct{ Type string }
			json.Unmarshal(d, &typ)
			if typ.Type != name {
				t.Fatalf("event %q carries type %q", name, typ.Type)
			}
			events, data = append(events, name), append(data, d)
		}
	}
	return events, data
}
