package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/safehttp"
)

// wireConversations builds the conversation engine on the configured
// model, the knowledge base, listings and the forgery-guarded client url
// tools are called through (the webhooks' address rules).
func (a *App) wireConversations(context.Context) error {
	model, err := llm.New(a.cfg.LLM)
	if err != nil {
		return err
	}
	guard := safehttp.New(safehttp.Options{AllowPrivate: a.cfg.Webhooks.AllowPrivate, Resolver: a.cfg.Webhooks.Resolver,
		MaxBody: conversations.MaxToolAnswer + 1})
	deps := conversations.Deps{Agents: a.db, Store: a.db.Conversations, Knowledge: a.srv.kb, Tools: guard, Log: a.log}
	if a.srv.listings.svc != nil {
		deps.Listings = a.srv.listings.svc
	}
	a.srv.conv, err = conversations.New(deps, conversations.Config{Model: model, ContextTokens: a.cfg.LLM.ContextTokens})
	return err
}

// conversationList is the data of GET /api/v1/conversations.
type conversationList struct {
	Conversations []conversations.View `json:"conversations"`
	Total         int                  `json:"total"`
	Limit         int                  `json:"limit"`
	Offset        int                  `json:"offset"`
}

func (s *Server) createConversation(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in conversations.StartInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	v, err := s.conv.Start(r.Context(), orgID(r), conversations.ChannelAPI, in)
	if err != nil {
		return err
	}
	s.writeV2(w, http.StatusCreated, v)
	return nil
}

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q, err := conversations.ParseList(r.URL.Query())
	if err != nil {
		return err
	}
	vs, total, err := s.conv.List(r.Context(), orgID(r), q)
	if err != nil {
		return err
	}
	s.writeV2(w, http.StatusOK, conversationList{Conversations: vs, Total: total, Limit: q.Limit, Offset: q.Offset})
	return nil
}

func (s *Server) getConversation(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	v, err := s.conv.Get(r.Context(), orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	s.writeV2(w, http.StatusOK, v)
	return nil
}

func (s *Server) endConversation(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	v, err := s.conv.End(r.Context(), orgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	s.writeV2(w, http.StatusOK, v)
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

// sendMessage answers one user message, whole or (stream) as server-sent
// events: delta {"content"} as the answer is written, then done with the
// whole message, or error. A failure before the first delta is a plain
// error answer (e.g. 502 naming the model service).
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var in messageInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	if in.Content == nil {
		return errs.InvalidField("content", "required")
	}
	if !in.Stream {
		m, err := s.conv.Send(r.Context(), orgID(r), p.ByName("id"), *in.Content, nil)
		if err != nil {
			return err
		}
		s.writeV2(w, http.StatusOK, messageAnswer{Message: m})
		return nil
	}
	sse := newSSE(w)
	m, err := s.conv.Send(r.Context(), orgID(r), p.ByName("id"), *in.Content, func(d string) {
		sse.event("delta", map[string]string{"content": d})
	})
	switch {
	case err != nil && !sse.open:
		return err
	case err != nil:
		e := toError(err)
		s.log.WarnContext(r.Context(), "conversation turn failed mid-stream", "request_id", requestID(r.Context()), "err", err)
		sse.event("error", map[string]any{"error": map[string]any{"message": e.Message, "status": status(e)}})
		return nil
	}
	sse.event("done", messageAnswer{Message: m})
	return nil
}

// sse writes server-sent events, sending the headers with the first.
type sse struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	open bool
}

func newSSE(w http.ResponseWriter) *sse { return &sse{w: w, rc: http.NewResponseController(w)} }

func (e *sse) start() {
	if e.open {
		return
	}
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	e.w.WriteHeader(http.StatusOK)
	e.open = true
}

// event sends one named event (name "" sends data only, as OpenAI does).
func (e *sse) event(name string, v any) {
	e.start()
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	e.rc.Flush()
}

func (e *sse) raw(s string) {
	e.start()
	fmt.Fprint(e.w, s)
	e.rc.Flush()
}

// toolsSecretView is the data of POST /api/v2/tools/secret.
type toolsSecretView struct {
	Secret string `json:"secret"`
}

// rotateToolsSecret gives the organization a new tools secret, shown once.
func (s *Server) rotateToolsSecret(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	secret, err := s.conv.RotateToolsSecret(r.Context(), orgID(r))
	if err != nil {
		return err
	}
	s.writeV2(w, http.StatusOK, toolsSecretView{Secret: secret})
	return nil
}
