// Package conversations is the HTTP face of conversations: the conversation API
// and the OpenAI-compatible endpoint voice workers point their LLM plugin
// at. Answers stream as server-sent events in two wire formats, which is
// why it is its own package (package app/api keeps the route table, auth
// and the error mapping; app/api/httpx decodes and answers). The rules live in
// app/conversations; this package decodes, calls one use case and writes.
package conversations

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/julienschmidt/httprouter"

	analysisapi "github.com/agentd/agentd/app/api/analysis"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/api/sse"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/storage/agentstore"
)

// AgentLister lists an organization's agents (*storage.Stores).
type AgentLister interface {
	ListAgents(ctx context.Context, orgID string, f agentstore.AgentFilter) ([]agentstore.Agent, bool, error)
}

// Deps are what the handlers use; package app gives its own request
// helpers, so bodies are decoded and errors shaped as on every route.
type Deps struct {
	Conv   *conversations.Service
	Calls  conversations.CallStore
	Agents AgentLister
	Log    *slog.Logger
	// Slots bounds the caller's streamed answers (a 429 past the bound);
	// nil: no bound.
	Slots StreamSlots
	// Analysis reads a conversation's analysis (app/analysis); nil (and
	// no error) when it has none, and the field may be nil too.
	Analysis *analysisapi.Handlers
}

// StreamSlots hands out the caller's streamed-answer slots (the API's
// per-key bound); release gives one back.
type StreamSlots interface {
	StreamSlot(r *http.Request) (release func(), err error)
}

// streamSlot takes a streamed-answer slot of the caller (Slots).
func (h *Handlers) streamSlot(r *http.Request) (release func(), err error) {
	if h.d.Slots == nil {
		return func() {}, nil
	}
	return h.d.Slots.StreamSlot(r)
}

// withAnalysis is GET /api/v1/conversations/{id}'s data: the conversation
// and, once it has one, its analysis (absent otherwise).
type withAnalysis struct {
	conversations.View
	Analysis any `json:"analysis,omitempty"`
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// conversationList is the data of GET /api/v1/conversations.
type conversationList struct {
	Conversations []conversations.View `json:"conversations"`
	Total         int                  `json:"total"`
	Limit         int                  `json:"limit"`
	Offset        int                  `json:"offset"`
}

func (h *Handlers) decode(r *http.Request, dst any) error {
	b, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	return httpx.DecodeBytes(b, dst)
}

// Create answers POST /api/v1/conversations.
func (h *Handlers) Create(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in conversations.StartInput
	if err := h.decode(r, &in); err != nil {
		return err
	}
	v, err := h.d.Conv.Start(r.Context(), httpx.OrgID(r), conversations.ChannelAPI, in)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusCreated, v)
	return nil
}

// List answers GET /api/v1/conversations.
func (h *Handlers) List(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q, err := conversations.ParseList(r.URL.Query())
	if err != nil {
		return err
	}
	vs, total, err := h.d.Conv.List(r.Context(), httpx.OrgID(r), q)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, conversationList{Conversations: vs, Total: total, Limit: q.Limit, Offset: q.Offset})
	return nil
}

// Get answers GET /api/v1/conversations/{id}.
func (h *Handlers) Get(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	v, err := h.d.Conv.Get(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	out := withAnalysis{View: v}
	if h.d.Analysis != nil {
		if out.Analysis, err = h.d.Analysis.ConversationAnalysisOf(r.Context(), httpx.OrgID(r), v.ID); err != nil {
			return err
		}
	}
	httpx.WriteData(w, http.StatusOK, out)
	return nil
}

// End answers POST /api/v1/conversations/{id}/end.
func (h *Handlers) End(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	v, err := h.d.Conv.End(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, v)
	return nil
}

// messageInput is the body of POST /api/v1/conversations/{id}/messages.
type messageInput struct {
	Content *string `json:"content"`
	Stream  bool    `json:"stream"`
}

// messageAnswer is its data.
type messageAnswer struct {
	Message conversations.Message `json:"message"`
}

// Send answers one user message, whole or (stream) as server-sent events:
// delta {"content"} as the answer is written, then done with the whole
// message, or error. A failure before the first delta is a plain error
// answer (e.g. 502 naming the model service).
func (h *Handlers) Send(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var in messageInput
	if err := h.decode(r, &in); err != nil {
		return err
	}
	content := ""
	if in.Content != nil {
		content = *in.Content // absent is refused after the lookup: another org's conversation is 404 first
	}
	if !in.Stream {
		m, err := h.d.Conv.Send(r.Context(), httpx.OrgID(r), p.ByName("id"), content, nil)
		if err != nil {
			return err
		}
		httpx.WriteData(w, http.StatusOK, messageAnswer{Message: m})
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
	m, err := h.d.Conv.Send(ctx, httpx.OrgID(r), p.ByName("id"), content, func(d string) {
		ev.Event("delta", map[string]string{"content": d})
	})
	switch {
	case err != nil && !ev.Open():
		return err
	case err != nil:
		st, msg := httpx.Status(err)
		h.d.Log.WarnContext(r.Context(), "conversation turn failed mid-stream", "err", err)
		ev.Event("error", map[string]any{"error": map[string]any{"message": msg, "status": st}})
		return nil
	}
	ev.Event("done", messageAnswer{Message: m})
	return nil
}

// RotateToolsSecret creates or rotates the organization's tools secret and
// shows it once (the previous one signs beside it for 24 h).
func (h *Handlers) RotateToolsSecret(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	v, err := h.d.Conv.RotateToolsSecret(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, v)
	return nil
}

// marshal encodes as the API does (no HTML escaping).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n"), err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"Internal server error","type":"api_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// Service is the engine the handlers call (the dashboard reads through it).
func (h *Handlers) Service() *conversations.Service { return h.d.Conv }
