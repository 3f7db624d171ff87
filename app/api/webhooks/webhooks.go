package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/errs"
)

// Handlers of /api/v2/webhooks and /api/v2/events: decode, one call into
// app/events, a typed envelope. Bodies use the v2 shape {data, meta}.

// webhookList is the data of GET /api/v2/webhooks.
type webhookList struct {
	Webhooks []events.Webhook `json:"webhooks"`
	Count    int              `json:"count"`
}

// webhookDeleted is the data of DELETE /api/v2/webhooks/{id}.
type webhookDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// eventTypes is the data of GET /api/v2/events/types.
type eventTypes struct {
	Types []events.TypeInfo `json:"types"`
}

func (h *Handlers) CreateWebhook(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in events.Input
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	wh, err := h.d.Events.Create(r.Context(), httpx.OrgID(r), in)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusCreated, wh)
	return nil
}

func (h *Handlers) ListWebhooks(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ws, err := h.d.Events.List(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, webhookList{Webhooks: ws, Count: len(ws)})
	return nil
}

func (h *Handlers) GetWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	wh, err := h.d.Events.Get(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, wh)
	return nil
}

func (h *Handlers) UpdateWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var in events.Input
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	wh, err := h.d.Events.Update(r.Context(), httpx.OrgID(r), p.ByName("id"), in)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, wh)
	return nil
}

func (h *Handlers) DeleteWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	if err := h.d.Events.Delete(r.Context(), httpx.OrgID(r), p.ByName("id")); err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, webhookDeleted{ID: p.ByName("id"), Deleted: true})
	return nil
}

func (h *Handlers) RotateWebhookSecret(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	wh, err := h.d.Events.RotateSecret(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, wh)
	return nil
}

func (h *Handlers) TestWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	ev, err := h.d.Events.Test(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusAccepted, ev)
	return nil
}

// intParam reads an optional integer query parameter.
func intParam(r *http.Request, name string) (int, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errs.InvalidField(name, "must be an integer")
	}
	if n == 0 && name == "limit" {
		return 0, errs.InvalidField(name, "must be 1 or more")
	}
	return n, nil
}

func (h *Handlers) ListDeliveries(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	q := events.DeliveryQuery{Status: r.URL.Query().Get("status"), EventID: r.URL.Query().Get("eventId")}
	var err error
	if q.Limit, err = intParam(r, "limit"); err != nil {
		return err
	}
	if q.Offset, err = intParam(r, "offset"); err != nil {
		return err
	}
	page, err := h.d.Events.Deliveries(r.Context(), httpx.OrgID(r), p.ByName("id"), q)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, page)
	return nil
}

func (h *Handlers) RetryDelivery(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	d, err := h.d.Events.Retry(r.Context(), httpx.OrgID(r), p.ByName("id"), p.ByName("deliveryId"))
	if err != nil {
		return err
	}
	if h.d.Deliveries != nil {
		h.d.Deliveries.Wake()
	}
	httpx.WriteData(w, http.StatusAccepted, d)
	return nil
}

func (h *Handlers) ListEvents(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	types, err := events.ParseTypes(r.URL.Query()["type"])
	if err != nil {
		return err
	}
	q := events.Query{After: r.URL.Query().Get("after"), Types: types}
	if q.Limit, err = intParam(r, "limit"); err != nil {
		return err
	}
	page, err := h.d.Events.ListEvents(r.Context(), httpx.OrgID(r), q)
	if err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, page)
	return nil
}

func (h *Handlers) ListEventTypes(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) error {
	httpx.WriteData(w, http.StatusOK, eventTypes{Types: events.Catalogue})
	return nil
}

// streamEvents is GET /api/v2/events/stream: server-sent events, one per
// logged event (id = event id, event = type, data = the webhook body),
// resumed after Last-Event-ID (or ?after=), from now on without either.
func (h *Handlers) StreamEvents(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	types, err := events.ParseTypes(r.URL.Query()["type"])
	if err != nil {
		return err
	}
	after := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if after == "" {
		after = r.URL.Query().Get("after")
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(h.d.Streams, cancel) // the server is stopping
	defer stop()
	sink := &sseSink{w: w, rc: http.NewResponseController(w)}
	allowed := func() bool { return h.d.Recheck.StillAllowed(r, access.CapEventsRead) }
	guarded, release, err := h.d.Guard.Watch(ctx, httpx.PrincipalOf(r.Context()).KeyID, allowed, cancel, sink)
	if err != nil {
		return err
	}
	defer release()
	err = h.d.Events.Stream(ctx, httpx.OrgID(r), after, types, h.d.Stream, guarded)
	if sink.open {
		if err != nil && ctx.Err() == nil {
			h.d.Log.DebugContext(r.Context(), "event stream ended", append(httpx.LogAttrs(r), "err", err)...)
		}
		return nil // the answer has started: nothing else can be sent
	}
	return err
}

// sseSink writes a stream as text/event-stream.
type sseSink struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	open bool
}

// Open sends the headers and the client's reconnect delay.
func (k *sseSink) Open() error {
	h := k.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	k.w.WriteHeader(http.StatusOK)
	k.open = true
	if _, err := fmt.Fprint(k.w, "retry: 3000\n\n"); err != nil {
		return err
	}
	return k.rc.Flush()
}

// Send writes one event: id, type and the webhook body as data.
func (k *sseSink) Send(e events.Event, body []byte) error {
	data := strings.ReplaceAll(string(body), "\n", "\ndata: ") // compact JSON has none; never split an event
	if _, err := fmt.Fprintf(k.w, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, data); err != nil {
		return err
	}
	return k.rc.Flush()
}

// Ping writes a comment so proxies keep an idle stream open.
func (k *sseSink) Ping() error {
	if _, err := fmt.Fprint(k.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	return k.rc.Flush()
}
