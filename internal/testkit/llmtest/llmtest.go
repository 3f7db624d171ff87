// Package llmtest is a real local HTTP server standing in for an
// OpenAI-compatible chat model (POST /v1/chat/completions, GET /v1/models):
// tests script its answers (text streamed in chunks or not, tool calls with
// their arguments streamed in pieces, a slow first token, an error status,
// a connection dropped mid-stream) and read back every request it got, so
// they can check what reached the model. It is imported by tests only.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ToolCall is a call the scripted model makes.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text, streamed in pieces of ArgChunk bytes
}

// Reply is one scripted answer.
type Reply struct {
	Content   string     // streamed word by word when the request streams
	ToolCalls []ToolCall // finish_reason tool_calls when set
	Status    int        // not 0 or 200: answer this status with an OpenAI error body
	Delay     time.Duration
	// DropAfter > 0 closes the connection after that many content chunks,
	// without [DONE]: a model server that died mid-answer.
	DropAfter int
	// Flood > 0 is a hostile model: after Content it streams content
	// chunks of Flood bytes without end, until the client goes away.
	Flood int
	// HugeLine > 0 is a hostile model: it sends one data: line of that
	// many bytes (a chunk whose content never ends), then the rest.
	HugeLine         int
	PromptTokens     int
	CompletionTokens int
	// NoUsage is a server that reports no usage (many local servers):
	// usage null when whole, no usage chunk when streamed.
	NoUsage bool
}

// Message is one message of a received request.
type Message struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// Text is the message's content as text (string content, or the text parts).
func (m Message) Text() string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				s, _ := pm["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// Request is one request the server received.
type Request struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []Message         `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Header   http.Header       `json:"-"`
	Body     []byte            `json:"-"`
}

// All is every message's text, joined: tests look for a passage in it.
func (r Request) All() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Role + ": " + m.Text() + "\n")
	}
	return b.String()
}

// ToolNames are the names of the tools the request offered.
func (r Request) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		var v struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		json.Unmarshal(t, &v)
		out = append(out, v.Function.Name)
	}
	return out
}

// Server is the scripted model.
type Server struct {
	URL      string // base URL, ".../v1"
	Requests atomic.Int64
	// Canceled counts requests whose client went away while the reply
	// was delayed (the caller's cancel reached the model).
	Canceled atomic.Int64
	// ArgChunk is the size of the pieces streamed tool-call arguments are
	// cut in (default 7 bytes: arguments arrive over several chunks).
	ArgChunk int

	mu       sync.Mutex
	script   []Reply
	fallback func(Request) Reply
	got      []Request
	srv      *http.Server
}

// New starts a scripted model, stopped at cleanup. With nothing scripted it
// answers "ok".
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", ArgChunk: 7}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// Push queues replies, answered in order, one per request.
func (s *Server) Push(rs ...Reply) {
	s.mu.Lock()
	s.script = append(s.script, rs...)
	s.mu.Unlock()
}

// Answer sets how requests are answered once the queue is empty.
func (s *Server) Answer(f func(Request) Reply) {
	s.mu.Lock()
	s.fallback = f
	s.mu.Unlock()
}

// Got is every chat request received so far, in order.
func (s *Server) Got() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.got...)
}

// Last is the last chat request received (zero when none).
func (s *Server) Last() Request {
	got := s.Got()
	if len(got) == 0 {
		return Request{}
	}
	return got[len(got)-1]
}

func (s *Server) next(req Request) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, req)
	if len(s.script) > 0 {
		r := s.script[0]
		s.script = s.script[1:]
		return r
	}
	if s.fallback != nil {
		return s.fallback(req)
	}
	return Reply{Content: "ok"}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"scripted","object":"model","created":0,"owned_by":"llmtest"}]}`)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	s.Requests.Add(1)
	var req Request
	dec := json.NewDecoder(r.Body)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil || json.Unmarshal(raw, &req) != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req.Header, req.Body = r.Header.Clone(), raw
	rep := s.next(req)
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			s.Canceled.Add(1)
			return
		}
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted failure %d","type":"server_error"}}`, rep.Status)
		return
	}
	if rep.PromptTokens == 0 {
		rep.PromptTokens = len(strings.Fields(req.All()))
	}
	if rep.CompletionTokens == 0 {
		rep.CompletionTokens = len(strings.Fields(rep.Content)) + len(rep.ToolCalls)
	}
	if req.Stream {
		s.stream(w, req, rep)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(whole(req, rep))
}

type fn struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function fn     `json:"function"`
}

func finish(rep Reply) string {
	if len(rep.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func usage(rep Reply) map[string]int {
	if rep.NoUsage {
		return nil
	}
	return map[string]int{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
		"total_tokens": rep.PromptTokens + rep.CompletionTokens}
}

func whole(req Request, rep Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	if len(rep.ToolCalls) > 0 {
		var calls []wireCall
		for _, c := range rep.ToolCalls {
			calls = append(calls, wireCall{ID: c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: c.Arguments}})
		}
		msg["tool_calls"] = calls
		if rep.Content == "" {
			msg["content"] = nil
		}
	}
	return map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion", "created": time.Now().Unix(),
		"model": req.Model, "choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish(rep)}},
		"usage": usage(rep)}
}

// stream writes the reply as server-sent events: the role, the content a
// word at a time, each tool call's name then its arguments in pieces, the
// finish reason, the usage, then [DONE].
func (s *Server) stream(w http.ResponseWriter, req Request, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(delta map[string]any, finishReason any, extra map[string]any) {
		chunk := map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": time.Now().Unix(),
			"model": req.Model, "choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finishReason}}}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	words := strings.SplitAfter(rep.Content, " ")
	for i, word := range words {
		if word == "" {
			continue
		}
		if rep.DropAfter > 0 && i >= rep.DropAfter {
			s.drop(w)
			return
		}
		send(map[string]any{"content": word}, nil, nil)
	}
	if rep.HugeLine > 0 {
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"`)
		pad := strings.Repeat("x", 64<<10)
		for n := 0; n < rep.HugeLine; n += len(pad) {
			if _, err := fmt.Fprint(w, pad); err != nil {
				return
			}
		}
		fmt.Fprint(w, "\"}}]}\n\n")
	}
	if rep.Flood > 0 {
		pad := strings.Repeat("x", rep.Flood)
		for {
			b, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": pad}}}})
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return // the client went away
			}
			if fl != nil {
				fl.Flush()
			}
		}
	}
	step := max(s.ArgChunk, 1)
	for i, c := range rep.ToolCalls {
		idx := i
		send(map[string]any{"tool_calls": []wireCall{{Index: &idx, ID: c.ID, Type: "function", Function: fn{Name: c.Name}}}}, nil, nil)
		for lo := 0; lo < len(c.Arguments); lo += step {
			part := c.Arguments[lo:min(lo+step, len(c.Arguments))]
			send(map[string]any{"tool_calls": []wireCall{{Index: &idx, Function: fn{Arguments: part}}}}, nil, nil)
		}
	}
	send(map[string]any{}, finish(rep), nil)
	if rep.NoUsage {
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
		"model": req.Model, "choices": []any{}, "usage": usage(rep)})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
}

// drop cuts the connection without finishing the stream.
func (s *Server) drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
