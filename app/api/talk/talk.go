// Package talk is the HTTP face of browser voice sessions: a WebSocket
// per session whose binary messages are 8 kHz 16-bit little-endian mono
// PCM both ways and whose text messages are JSON controls (dial/webvoice
// parses them). The dashboard's Talk control and the widget's microphone
// use it; the rules are app/webcall's and the voice loop app/voice's.
// Every check runs before the upgrade, so a refusal is a plain JSON error.
package talk

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/webcall"
	"github.com/agentd/agentd/app/widget"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/webvoice"
	"github.com/agentd/agentd/internal/errs"
)

// Deps are what the handlers use.
type Deps struct {
	WebCalls *webcall.Service
	Log      *slog.Logger
	// Stop ends when the server stops: every session then ends (the
	// agent stops, the call record is closed) before the features close.
	Stop context.Context
}

// Handlers are the routes' handlers.
type Handlers struct {
	d        Deps
	sessions sync.WaitGroup
}

// Wait waits up to d for the sessions to end once Stop has ended; false
// when some are still running.
func (h *Handlers) Wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() { h.sessions.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// writeWait bounds one message to the browser: a browser that stops
// reading is dropped, never holding the session.
const writeWait = 5 * time.Second

var errNotSocket = errs.New(errs.Invalid, "a voice session is a WebSocket: GET with Connection: Upgrade and Upgrade: websocket")

// upgrade reports whether r asks for a WebSocket; anything else is refused
// in the API's error shape before a grant is taken.
func upgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// Dashboard answers GET /api/v2/agents/{id}/talk: a session with one of
// the organization's agents (session cookie or API key). The socket's
// Origin must be the server's own (a page elsewhere cannot ride the
// member's cookie).
func (h *Handlers) Dashboard(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || !strings.EqualFold(u.Host, r.Host) {
			return errs.New(errs.Forbidden, "a voice session must be opened from this server's own pages (Origin)")
		}
	}
	if !upgrade(r) {
		return errNotSocket
	}
	pr := httpx.PrincipalOf(r.Context())
	who := pr.UserID
	if who == "" {
		who = "api key " + pr.Prefix
	}
	g, err := h.d.WebCalls.Dashboard(r.Context(), pr.OrgID, p.ByName("id"), who)
	if err != nil {
		return err
	}
	h.serve(w, r, g)
	return nil
}

// Widget answers GET /api/public/chat/sessions/{id}/voice?token=: a
// visitor's session from a listed page (browsers cannot set headers on a
// WebSocket, so the visitor token comes in the query).
func (h *Handlers) Widget(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if !upgrade(r) {
		return errNotSocket
	}
	o := widget.Origin(r.Header.Get("Origin"))
	g, err := h.d.WebCalls.Widget(r.Context(), r.URL.Query().Get("token"), p.ByName("id"), o, httpx.ClientAddr(r))
	if err != nil {
		var le *widget.LimitError
		if errors.As(err, &le) {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(le.RetryAfter.Seconds()))))
		}
		return err
	}
	h.serve(w, r, g)
	return nil
}

// serve upgrades and runs the session until it ends.
func (h *Handlers) serve(w http.ResponseWriter, r *http.Request, g webcall.Grant) {
	// The server's read and write timeouts are for requests, not for a
	// session that lasts minutes.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	// The Origin was checked before: the server's own for the dashboard,
	// the agent's allowedDomains for the widget.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		g.Release()
		return // Accept answered (400 or 426: not a WebSocket request)
	}
	c.SetReadLimit(webvoice.MaxAudio + 64)
	defer c.CloseNow()
	h.sessions.Add(1)
	defer h.sessions.Done()
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	if h.d.Stop != nil {
		defer context.AfterFunc(h.d.Stop, cancel)()
	}
	sess := webvoice.New()
	defer sess.Close()

	// The writer sends what the session queues, in order.
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		defer cancel()
		for m := range sess.Outgoing() {
			typ := websocket.MessageText
			if m.Binary {
				typ = websocket.MessageBinary
			}
			wctx, wcancel := context.WithTimeout(context.Background(), writeWait)
			err := c.Write(wctx, typ, m.Data)
			wcancel()
			if err != nil {
				return
			}
		}
	}()
	// The reader feeds the session; a malformed message, the browser's
	// hang-up or its going away ends the session. It reads under a context
	// of its own: cancelling a read closes the socket, and the end message
	// must still go out when the session ends from this side.
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	go func() {
		defer cancel()
		for {
			typ, data, err := c.Read(rctx)
			if err != nil {
				return
			}
			if err := sess.Receive(typ == websocket.MessageBinary, data); err != nil {
				c.Close(websocket.StatusUnsupportedData, err.Error())
				return
			}
		}
	}()
	go func() {
		select {
		case <-sess.HungUp():
			cancel()
		case <-ctx.Done():
		}
	}()

	end, err := h.d.WebCalls.Run(ctx, g, sess, func(id string) {
		sess.Send(map[string]any{"type": "ready", "callId": id, "maxDurationSeconds": int(g.MaxDuration.Seconds())})
	}, func(ev dial.TalkEvent) {
		if ev.Latency != nil {
			sess.Send(map[string]any{"type": "latency", "turn": ev.Latency})
			return
		}
		sess.Send(map[string]any{"type": "line", "role": ev.Role, "text": ev.Text, "interrupted": ev.Interrupted})
	})
	if err != nil {
		h.d.Log.Warn("web voice session", "err", err)
		end.Reason = "the call could not be recorded"
	}
	// What the agent still has queued is sent before the end (a goodbye).
	for i := 0; i < 500 && ctx.Err() == nil && sess.Queued() > 0; i++ {
		time.Sleep(dial.FrameDuration)
	}
	sess.Send(map[string]any{"type": "end", "reason": end.Reason})
	sess.Close()
	select {
	case <-wrote:
	case <-time.After(writeWait):
	}
	c.Close(websocket.StatusNormalClosure, "")
}
