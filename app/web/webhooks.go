package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/errs"
)

// Webhooks: endpoints (the secret shown once, on creation or rotation),
// their deliveries with status and response, retry, enable/disable,
// delete; and the event log, filtered by type and followed live.

type webhooksData struct {
	Webhooks  []events.Webhook
	Catalogue []events.TypeInfo
	// Created is the endpoint just created or rotated, with its secret.
	Created *events.WebhookSecret
	Form    webhookForm
}

type webhookForm struct {
	URL, Description string
	Events           []string
}

func (f webhookForm) Has(t string) bool { return slices.Contains(f.Events, t) }

func (s *Site) webhooksPage(w http.ResponseWriter, r *http.Request, u user) error {
	return s.renderWebhooks(w, r, u, http.StatusOK, nil, webhookForm{}, "")
}

func (s *Site) renderWebhooks(w http.ResponseWriter, r *http.Request, u user, status int, created *events.WebhookSecret, f webhookForm, msg string) error {
	ws, err := s.f.Events.List(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	d := webhooksData{Webhooks: ws, Catalogue: events.Catalogue, Created: created, Form: f}
	s.render(w, r, status, "webhooks", page{Title: "Webhooks", Nav: "webhooks", User: u, Error: msg, Data: d})
	return nil
}

func (s *Site) createWebhook(w http.ResponseWriter, r *http.Request, u user) error {
	f := webhookForm{URL: strings.TrimSpace(r.PostFormValue("url")), Description: strings.TrimSpace(r.PostFormValue("description")),
		Events: r.PostForm["events"]}
	evs := f.Events
	if evs == nil {
		evs = []string{}
	}
	wh, err := s.f.Events.Create(r.Context(), u.OrgID, events.Input{URL: &f.URL, Events: &evs, Description: &f.Description})
	if err != nil {
		var e *errs.Error
		if !asErr(err, &e) || e.Kind != errs.Invalid {
			return err
		}
		return s.renderWebhooks(w, r, u, http.StatusBadRequest, nil, f, e.Message)
	}
	return s.renderWebhooks(w, r, u, http.StatusCreated, &wh, webhookForm{}, "")
}

type webhookData struct {
	Webhook    events.Webhook
	Deliveries []events.Delivery
	Secret     string // after a rotation, once
	Status     string
	Statuses   []string
	Pager      pager
}

const deliveriesPerPage = 50

func (s *Site) webhookPage(w http.ResponseWriter, r *http.Request, u user) error {
	return s.renderWebhook(w, r, u, "")
}

func (s *Site) renderWebhook(w http.ResponseWriter, r *http.Request, u user, secret string) error {
	id := r.PathValue("id")
	wh, err := s.f.Events.Get(r.Context(), u.OrgID, id)
	if err != nil {
		return err
	}
	offset := pageParams(r)
	st := r.URL.Query().Get("status")
	statuses := []string{"pending", "delivering", "succeeded", "failed", "paused"}
	if !slices.Contains(statuses, st) {
		st = ""
	}
	p, err := s.f.Events.Deliveries(r.Context(), u.OrgID, id, events.DeliveryQuery{Status: st, Limit: deliveriesPerPage, Offset: offset})
	if err != nil {
		return err
	}
	d := webhookData{Webhook: wh, Deliveries: p.Deliveries, Secret: secret, Status: st, Statuses: statuses,
		Pager: newPager(r, offset, deliveriesPerPage, len(p.Deliveries), -1, p.Pagination.HasMore)}
	s.render(w, r, http.StatusOK, "webhook", page{Title: "Webhook", Nav: "webhooks", User: u, Data: d})
	return nil
}

func (s *Site) rotateWebhook(w http.ResponseWriter, r *http.Request, u user) error {
	ws, err := s.f.Events.RotateSecret(r.Context(), u.OrgID, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.renderWebhook(w, r, u, ws.Secret)
}

// enableWebhook turns an endpoint on (enabled=1) or off.
func (s *Site) enableWebhook(w http.ResponseWriter, r *http.Request, u user) error {
	on := r.PostFormValue("enabled") == "1"
	wh, err := s.f.Events.Update(r.Context(), u.OrgID, r.PathValue("id"), events.Input{Enabled: &on})
	if err != nil {
		return err
	}
	msg := "Webhook disabled: nothing is delivered to it until it is enabled"
	if on {
		msg = "Webhook enabled"
	}
	redirect(w, r, "/webhooks/"+wh.ID, msg)
	return nil
}

// testWebhook queues a ping to the endpoint alone.
func (s *Site) testWebhook(w http.ResponseWriter, r *http.Request, u user) error {
	id := r.PathValue("id")
	if _, err := s.f.Events.Test(r.Context(), u.OrgID, id); err != nil {
		return err
	}
	redirect(w, r, "/webhooks/"+id, "Test event queued: its delivery is listed below")
	return nil
}

func (s *Site) deleteWebhook(w http.ResponseWriter, r *http.Request, u user) error {
	if err := s.f.Events.Delete(r.Context(), u.OrgID, r.PathValue("id")); err != nil {
		return err
	}
	redirect(w, r, "/webhooks", "Webhook deleted")
	return nil
}

func (s *Site) retryDelivery(w http.ResponseWriter, r *http.Request, u user) error {
	id := r.PathValue("id")
	if _, err := s.f.Events.Retry(r.Context(), u.OrgID, id, r.PathValue("delivery")); err != nil {
		return err
	}
	redirect(w, r, "/webhooks/"+id, "Delivery queued again")
	return nil
}

const eventsPerPage = 100

type eventsData struct {
	Events    []events.Event
	Types     []string
	Catalogue []events.TypeInfo
	Next      string
	HasMore   bool
	After     string
}

func (f eventsData) Has(t string) bool { return slices.Contains(f.Types, t) }

// eventsPage is the event log from a cursor, oldest first, filtered by
// type; the page follows new events live (app.js) with the same filter.
func (s *Site) eventsPage(w http.ResponseWriter, r *http.Request, u user) error {
	q := r.URL.Query()
	types, err := events.ParseTypes(q["type"])
	if err != nil {
		return err
	}
	p, err := s.f.Events.ListEvents(r.Context(), u.OrgID, events.Query{After: q.Get("after"), Types: types, Limit: eventsPerPage})
	if err != nil {
		return err
	}
	d := eventsData{Events: p.Events, Types: types, Catalogue: events.Catalogue, HasMore: p.HasMore, After: q.Get("after")}
	if p.NextCursor != nil && p.HasMore {
		d.Next = *p.NextCursor
	}
	s.render(w, r, http.StatusOK, "events", page{Title: "Event log", Nav: "events", User: u, Data: d})
	return nil
}
