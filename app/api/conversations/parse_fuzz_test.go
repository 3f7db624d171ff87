package conversations

import (
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/errs"
)

// The request bodies of the OpenAI-compatible endpoint come from anyone
// with a key: any bytes give an input or a clear 400, never a panic.
func FuzzResponsesRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"a","input":"hi"}`,
		`{"model":"a","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"item_reference","id":"msg_1"}]}`,
		`{"model":"a","previous_response_id":"resp_1","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}`,
		`{"model":"a","input":"x","tools":[{"type":"function","name":"f","parameters":{}}],"tool_choice":{"type":"function","name":"f"},"text":{"format":{"type":"json_schema","name":"n","schema":{}}}}`,
		`{"model":"a","input":[{"role":"user","content":[{"type":"input_image"}]}]}`,
		`{"model":"a","input":[{"type":"computer_call"}],"background":true}`,
		`{"input":null}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, _, err := ParseResponsesRequest(body, "")
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: not a clear error: %v", body, err)
			}
			return
		}
		if in.AgentID == "" {
			t.Fatalf("%q: accepted without a model", body)
		}
		for _, it := range in.Input {
			if it.Ref == "" && it.Message.Role == "" {
				t.Fatalf("%q: an item without a role", body)
			}
		}
	})
}

func FuzzChatCompletionRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"a","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"a","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url"}]}],"n":2}`,
		`{"model":"a","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto"}`,
		`{"model":"a","logprobs":true}`, `{"messages":[{"role":"x"}]}`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	h := &Handlers{}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, _, err := h.completionInput(body, "")
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: not a clear error: %v", body, err)
			}
			return
		}
		if in.AgentID == "" {
			t.Fatalf("%q: accepted without a model", body)
		}
	})
}
