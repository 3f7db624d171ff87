package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/baseurl"
	"github.com/agentd/agentd/internal/errs"
)

// OpenAIConfig configures a client of an OpenAI-compatible service.
type OpenAIConfig struct {
	URL     string        // base URL, e.g. http://127.0.0.1:11434/v1
	Model   string        // default model; an agent's model overrides it
	APIKey  string        // sent as Authorization: Bearer when set
	Timeout time.Duration // bounds a whole call; 0: 60 s
	Client  *http.Client  // nil: a client without a global timeout
}

// OpenAI talks to any OpenAI-compatible /chat/completions service (OpenAI,
// Ollama, vLLM, llama.cpp server, LiteLLM), always streaming, so the first
// words reach the caller as soon as the model writes them.
type OpenAI struct {
	cfg  OpenAIConfig
	http *http.Client
}

// NewOpenAI builds the client; the URL must be http or https.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := baseurl.V1(cfg.URL) // with or without /v1: the same service
	if err != nil {
		return nil, fmt.Errorf("--llm-url %q: %v", cfg.URL, err)
	}
	cfg.URL = u.String()
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	c := cfg.Client
	if c == nil {
		c = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return &OpenAI{cfg: cfg, http: c}, nil
}

// Name is the service's host, which error messages name.
func (o *OpenAI) Name() string {
	host := strings.TrimPrefix(strings.TrimPrefix(o.cfg.URL, "https://"), "http://")
	host, _, _ = strings.Cut(host, "/")
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:] // never show credentials in a URL
	}
	return "openai at " + host
}

// Chat streams one completion. A 5xx, a refused connection or a stream
// cut before [DONE] is unavailable; the timeout is a gateway timeout; the
// caller's context ending cancels the request upstream.
func (o *OpenAI) Chat(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	body, err := o.encode(req)
	if err != nil {
		return Response{}, err
	}
	cctx, cancel := context.WithTimeoutCause(ctx, o.cfg.Timeout, errModelTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(cctx, http.MethodPost, o.cfg.URL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return Response{}, unavailable(o.Name(), err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	if o.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.http.Do(hr)
	if err != nil {
		return Response{}, o.failure(ctx, cctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return Response{}, answered(o.Name(), o.model(req), &StatusError{Status: resp.StatusCode, Body: string(bytes.TrimSpace(msg))})
	}
	var out Response
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// A server that ignores "stream" answers the whole completion.
		out, err = ParseCompletion(io.LimitReader(resp.Body, maxAnswer))
		if err == nil && onDelta != nil && out.Content != "" {
			onDelta(out.Content)
		}
	} else {
		out, err = ParseStream(resp.Body, onDelta)
	}
	if err != nil {
		return Response{}, o.failure(ctx, cctx, err)
	}
	return out, nil
}

var errModelTimeout = errors.New("model timeout")

// failure classifies a transport error: the caller gone, our timeout, or
// the service down.
func (o *OpenAI) failure(parent, cctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrAnswerTooLarge):
		return tooLarge(o.Name(), err)
	case parent.Err() != nil:
		return errs.Wrap(errs.Canceled, "client closed request", parent.Err())
	case errors.Is(context.Cause(cctx), errModelTimeout):
		return timeout(o.Name(), err)
	}
	return unavailable(o.Name(), err)
}

// maxAnswer bounds what is read of one answer (16 MiB).
const maxAnswer = 16 << 20

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// WireMessages are messages in OpenAI's format.
func WireMessages(ms []Message) []wireMessage {
	out := make([]wireMessage, 0, len(ms))
	for _, m := range ms {
		content := m.Content
		w := wireMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
		}
		if len(m.ToolCalls) > 0 && m.Content == "" {
			w.Content = nil
		}
		out = append(out, w)
	}
	return out
}

// model is the model a request asks for: its own or the configured one.
func (o *OpenAI) model(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return o.cfg.Model
}

func (o *OpenAI) encode(req Request) ([]byte, error) {
	model := o.model(req)
	body := map[string]any{}
	for k, v := range req.Extra {
		body[k] = v
	}
	body["model"] = model
	body["messages"] = WireMessages(req.Messages)
	body["stream"] = true
	body["stream_options"] = map[string]bool{"include_usage": true}
	if len(req.Tools) > 0 {
		tools := make([]wireTool, 0, len(req.Tools))
		for _, t := range req.Tools {
			var w wireTool
			w.Type = "function"
			w.Function.Name, w.Function.Description, w.Function.Parameters = t.Name, t.Description, t.Parameters
			if len(w.Function.Parameters) == 0 {
				w.Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			tools = append(tools, w)
		}
		body["tools"] = tools
	} else {
		delete(body, "tool_choice") // refused by some servers without tools
	}
	return json.Marshal(body)
}
