// Package llm is the chat model agents answer with: one interface (Model),
// a client of any OpenAI-compatible /chat/completions service, and the
// errors a model failure gives (unavailable: 502 naming the model service;
// too slow: 504). Conversations use it; post-call analysis and the chat
// widget can reuse it. No HTTP server code here.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentd/agentd/internal/errs"
)

// Message is one message of a chat, in OpenAI's roles: system, user,
// assistant (with ToolCalls) and tool (with ToolCallID).
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
}

// ToolCall is a function call the model asked for.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text as the model wrote it
}

// Tool is a function offered to the model.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema; nil: an empty object schema
}

// Request is one chat call.
type Request struct {
	Model    string // "" uses the client's configured model
	Messages []Message
	Tools    []Tool
	// Extra are fields of the caller's request passed through as they are
	// (tool_choice, temperature, ...), e.g. from the OpenAI-compatible
	// endpoint; nil for none.
	Extra map[string]json.RawMessage
}

// Usage is token usage as the model service reports it.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
}

// Add sums usage over the rounds of a turn.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
}

// Response is a whole answer.
type Response struct {
	Content      string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
}

// Model answers a chat. onDelta, when not nil, gets the answer's text as it
// is generated (tool-call arguments are not text and never reach it). The
// context's end cancels the request upstream.
type Model interface {
	Chat(ctx context.Context, req Request, onDelta func(string)) (Response, error)
	// Name names the model service in errors and in doctor's output.
	Name() string
}

// Error codes of model failures; app maps the kinds to 502 and 504.
const (
	CodeUnavailable = "MODEL_UNAVAILABLE"
	CodeTimeout     = "MODEL_TIMEOUT"
	CodeTooLarge    = "MODEL_ANSWER_TOO_LARGE"
)

// StatusError is a model service's answer other than 200, wrapped in the
// unavailable or timeout error: callers that must tell a refusal (4xx)
// from an outage (429, 5xx) read Status.
type StatusError struct {
	Status int
	Body   string // the start of the answer's body
}

func (e *StatusError) Error() string { return fmt.Sprintf("status %d: %s", e.Status, e.Body) }

// tooLarge is an answer past a bound of ParseStream: a bad gateway (the
// model misbehaves), named with the bound.
func tooLarge(name string, err error) error {
	e := errs.Wrap(errs.BadGateway, "model service "+name+" "+err.Error(), err)
	e.Code = CodeTooLarge
	return e
}

func unavailable(name string, err error) error {
	e := errs.Wrap(errs.BadGateway, "model service "+name+" unavailable", err)
	e.Code = CodeUnavailable
	return e
}

// answered is a status other than 200 from the model service: the message
// names the service, the model and the status so the operator sees a 401
// (bad key) or a 400 (bad model name) from the API; the body only wrapped,
// for the log, since it may repeat what the caller sent.
func answered(name, model string, err *StatusError) error {
	kind, code := errs.BadGateway, CodeUnavailable
	if err.Status == http.StatusGatewayTimeout || err.Status == http.StatusRequestTimeout {
		kind, code = errs.GatewayTimeout, CodeTimeout
	}
	e := errs.Wrap(kind, fmt.Sprintf("model service %s (%s) answered HTTP %d", name, model, err.Status), err)
	e.Code = code
	return e
}

func timeout(name string, err error) error {
	e := errs.Wrap(errs.GatewayTimeout, "model service "+name+" did not answer in time", err)
	e.Code = CodeTimeout
	return e
}
