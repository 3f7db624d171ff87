// Package widget is the HTTP face of the chat widget: the script itself
// and the public chat endpoints a page on a listed site calls (no API key:
// the page's Origin and the visitor token decide). CORS headers go only to
// listed origins. The rules live in app/widget; this package decodes,
// calls one use case and writes; package app/api keeps the route table.
package widget

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/api/sse"
	"github.com/agentd/agentd/app/widget"
)

// Deps are what the handlers use; package app gives its own request
// helpers, so bodies are decoded and errors shaped as on every route.
type Deps struct {
	Widget *widget.Service
	Log    *slog.Logger
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// origin is the page's origin, "scheme://host:port", or "": the check
// stops browsers (which send the true Origin), not scripts (held by the
// visitor tokens and the limits).
func origin(r *http.Request) string { return widget.Origin(r.Header.Get("Origin")) }

// cors lets the page read the answer when its origin is listed for the
// agent; an unlisted page gets no header, so its browser hides the answer.
func cors(w http.ResponseWriter, r *http.Request, allowed bool) {
	w.Header().Add("Vary", "Origin")
	if !allowed {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
	h.Set("Access-Control-Expose-Headers", "Retry-After")
}

// refuse writes what the client must know before the error body: when to
// retry.
func refuse(w http.ResponseWriter, err error) error {
	var le *widget.LimitError
	if errors.As(err, &le) {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(le.RetryAfter.Seconds()))))
	}
	return err
}

// Preflight answers OPTIONS on /api/public/: the listed origins only.
func (h *Handlers) Preflight(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // api public chat X Y [Z]
	o, ok := origin(r), false
	if h.d.Widget != nil && len(parts) >= 5 && parts[2] == "chat" {
		switch {
		case parts[3] == "sessions" && len(parts) == 6:
			ok = h.d.Widget.AllowConversationOrigin(r.Context(), parts[4], o)
		case len(parts) == 5:
			ok = h.d.Widget.AllowOrigin(r.Context(), parts[3], o)
		}
	}
	cors(w, r, ok)
	if ok {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Methods", "GET, POST")
		hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		hd.Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// Config answers GET /api/public/chat/{agentId}/config: the widget's look.
func (h *Handlers) Config(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	st, err := h.d.Widget.Config(r.Context(), p.ByName("agentId"), origin(r))
	cors(w, r, err == nil)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, st)
	return nil
}

// Start answers POST /api/public/chat/{agentId}/sessions.
func (h *Handlers) Start(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	agentID, o := p.ByName("agentId"), origin(r)
	cors(w, r, h.d.Widget.AllowOrigin(r.Context(), agentID, o))
	s, err := h.d.Widget.Start(r.Context(), agentID, o, httpx.ClientAddr(r))
	if err != nil {
		return refuse(w, err)
	}
	httpx.WriteData(w, http.StatusCreated, s)
	return nil
}

func bearer(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// History answers GET /api/public/chat/sessions/{id}/messages.
func (h *Handlers) History(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, o := p.ByName("id"), origin(r)
	cors(w, r, h.d.Widget.AllowConversationOrigin(r.Context(), id, o))
	hist, err := h.d.Widget.History(r.Context(), bearer(r), id, o)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, hist)
	return nil
}

type messageInput struct {
	Content *string `json:"content"`
}

type messageAnswer struct {
	Message any `json:"message"`
}

// Send answers POST /api/public/chat/sessions/{id}/messages {content} as
// server-sent events: delta {"content"} as the answer is written, then
// done {"message"}, or error. A refusal before the first delta is a plain
// error answer (401, 403, 413, 429 with Retry-After, 502...).
func (h *Handlers) Send(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, o := p.ByName("id"), origin(r)
	cors(w, r, h.d.Widget.AllowConversationOrigin(r.Context(), id, o))
	b, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	var in messageInput
	if err := httpx.DecodeBytes(b, &in); err != nil {
		return err
	}
	content := ""
	if in.Content != nil {
		content = *in.Content
	}
	// A visitor that stops reading is dropped within sse.WriteTimeout and
	// its turn cancelled, so it holds neither the answer slot nor the model.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ev := sse.NewOnFail(w, cancel)
	m, err := h.d.Widget.Send(ctx, bearer(r), id, o, httpx.ClientAddr(r), content, func(d string) {
		ev.Event("delta", map[string]string{"content": d})
	})
	switch {
	case err != nil && !ev.Open():
		return refuse(w, err)
	case err != nil:
		st, msg := httpx.Status(err)
		if !errors.Is(err, context.Canceled) {
			h.d.Log.WarnContext(r.Context(), "widget turn failed mid-stream", "err", err)
		}
		ev.Event("error", map[string]any{"error": map[string]any{"message": msg, "status": st}})
		return nil
	}
	ev.Event("done", messageAnswer{Message: m})
	return nil
}

// Service is the widget the handlers call (tests, the CLI's rotation).
func (h *Handlers) Service() *widget.Service { return h.d.Widget }
