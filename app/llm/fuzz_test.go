package llm

import (
	"strings"
	"testing"
)

// The upstream stream parser takes whatever a model server sends: it never
// panics, the text given to onDelta is the content it returns, and a
// stream without [DONE] or a finish reason is refused, and an accepted
// answer is within MaxAnswerText.
func FuzzParseStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\n\ndata: [DONE]\n\n",
		": keep-alive\n\nevent: message\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\ndata: [DONE]\n",
		"data: {\"error\":{\"message\":\"overloaded\"}}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":99999,\"id\":\"x\"}]}}]}\n\n",
		"data: not json\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("x", 70000) + "\"}}]}\n\ndata: [DONE]\n\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var deltas strings.Builder
		r, err := ParseStream(strings.NewReader(in), func(d string) { deltas.WriteString(d) })
		if err != nil {
			return
		}
		if r.Content != deltas.String() {
			t.Fatalf("content %q, deltas %q", r.Content, deltas.String())
		}
		size := len(r.Content)
		for _, c := range r.ToolCalls {
			size += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
		if size > MaxAnswerText {
			t.Fatalf("an answer of %d bytes passed the bound", size)
		}
		if len(r.ToolCalls) > maxToolCalls {
			t.Fatalf("%d tool calls", len(r.ToolCalls))
		}
		if !strings.Contains(in, "[DONE]") && r.FinishReason == "" {
			t.Fatalf("an unfinished stream was accepted")
		}
	})
}

// Tool-call arguments, as a model writes them: an object or an error,
// never a panic, never more than MaxArguments accepted.
func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{`{"people": 4}`, ``, `  `, `null`, `[]`, `{"a":1}{"b":2}`, `{"a":`, `"str"`,
		`{"n": 1e999}`, `{"deep":{"x":[1,2,{"y":null}]}}`, "{\"bad\": \"\xff\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseArguments(s)
		if err != nil {
			if m != nil {
				t.Fatalf("a value with an error")
			}
			return
		}
		if m == nil || len(s) > MaxArguments {
			t.Fatalf("accepted %q as %v", s, m)
		}
	})
}
