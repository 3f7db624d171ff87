package events

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/hookstore"
)

// Delivery is one event owed to one endpoint, with its latest attempt and
// the whole attempt history.
type Delivery struct {
	ID             string    `json:"id"`
	WebhookID      string    `json:"webhookId"`
	EventID        string    `json:"eventId"`
	EventType      string    `json:"eventType"`
	Status         string    `json:"status"` // pending, delivering, succeeded, failed, paused
	Attempts       int       `json:"attempts"`
	ResponseCode   *int      `json:"responseCode"` // of the latest attempt
	DurationMs     *int64    `json:"durationMs"`
	Error          *string   `json:"error"`
	LastAttemptAt  *string   `json:"lastAttemptAt"`
	NextAttemptAt  *string   `json:"nextAttemptAt"` // while pending
	CreatedAt      string    `json:"createdAt"`
	AttemptHistory []Attempt `json:"attemptHistory"`
}

// Attempt is one HTTP attempt of a delivery.
type Attempt struct {
	Attempt      int     `json:"attempt"`
	Status       string  `json:"status"` // succeeded or failed
	ResponseCode *int    `json:"responseCode"`
	ResponseBody *string `json:"responseBody"` // at most 1 KB
	Error        *string `json:"error"`
	DurationMs   int64   `json:"durationMs"`
	StartedAt    string  `json:"startedAt"`
}

func intPtr(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func deliveryView(d hookstore.Delivery) Delivery {
	v := Delivery{ID: d.ID, WebhookID: d.EndpointID, EventID: d.EventID, EventType: d.EventType, Status: d.Status,
		Attempts: d.Attempts, ResponseCode: intPtr(d.LastCode), Error: strPtr(d.LastError),
		LastAttemptAt: timePtr(d.LastAttemptAt), CreatedAt: formatTime(d.CreatedAt), AttemptHistory: []Attempt{}}
	if d.LastDuration != nil {
		ms := d.LastDuration.Milliseconds()
		v.DurationMs = &ms
	}
	if d.Status == hookstore.DeliveryPending {
		v.NextAttemptAt = timePtr(&d.NextAttemptAt)
	}
	for _, a := range d.History {
		v.AttemptHistory = append(v.AttemptHistory, Attempt{Attempt: a.Attempt, Status: a.Status,
			ResponseCode: intPtr(a.ResponseCode), ResponseBody: strPtr(a.ResponseBody), Error: strPtr(a.Error),
			DurationMs: a.Duration.Milliseconds(), StartedAt: formatTime(a.StartedAt)})
	}
	return v
}

// DeliveryQuery filters and pages an endpoint's deliveries (newest event
// first).
type DeliveryQuery struct {
	Status  string
	EventID string
	Limit   int // default 50, max 100
	Offset  int
}

// DeliveryPage is one page of deliveries.
type DeliveryPage struct {
	Deliveries []Delivery     `json:"deliveries"`
	Pagination DeliveryPaging `json:"pagination"`
}

// DeliveryPaging says where the page is.
type DeliveryPaging struct {
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"hasMore"`
}

var deliveryStatuses = []string{hookstore.DeliveryPending, hookstore.DeliveryDelivering, hookstore.DeliverySucceeded,
	hookstore.DeliveryFailed, hookstore.DeliveryPaused}

// Deliveries lists an endpoint's deliveries.
func (s *Service) Deliveries(ctx context.Context, orgID, id string, q DeliveryQuery) (DeliveryPage, error) {
	switch {
	case q.Limit == 0:
		q.Limit = 50
	case q.Limit < 1 || q.Limit > 100:
		return DeliveryPage{}, errs.InvalidField("limit", "must be from 1 to 100")
	}
	if q.Offset < 0 {
		return DeliveryPage{}, errs.InvalidField("offset", "must be 0 or more")
	}
	if q.Status != "" && !slices.Contains(deliveryStatuses, q.Status) {
		return DeliveryPage{}, errs.InvalidField("status", "must be pending, delivering, succeeded, failed or paused")
	}
	ds, err := s.DB.Webhooks.ListDeliveries(ctx, hookstore.DeliveryFilter{OrgID: orgID, EndpointID: id, Status: q.Status,
		EventID: q.EventID, Limit: q.Limit + 1, Offset: q.Offset})
	if err != nil {
		return DeliveryPage{}, notFound(err, "webhook")
	}
	p := DeliveryPage{Deliveries: []Delivery{}, Pagination: DeliveryPaging{Limit: q.Limit, Offset: q.Offset, HasMore: len(ds) > q.Limit}}
	for i, d := range ds {
		if i == q.Limit {
			break
		}
		p.Deliveries = append(p.Deliveries, deliveryView(d))
	}
	return p, nil
}

// Retry sends a delivery again now (a replay when it had succeeded or
// failed: one more attempt with the same webhook-id, no new schedule).
func (s *Service) Retry(ctx context.Context, orgID, id, deliveryID string) (Delivery, error) {
	d, err := s.DB.Webhooks.RetryDelivery(ctx, orgID, id, deliveryID, time.Now())
	switch {
	case errors.Is(err, hookstore.ErrWebhookDisabled):
		return Delivery{}, errs.Wrap(errs.Conflict, "webhook is disabled: enable it (PATCH enabled: true) before retrying", err)
	case errors.Is(err, hookstore.ErrDeliveryInFlight):
		return Delivery{}, errs.Wrap(errs.Conflict, "delivery "+strconv.Quote(deliveryID)+" is being sent; retry once it settles", err)
	case err != nil:
		return Delivery{}, notFound(err, "delivery")
	}
	return deliveryView(d), nil
}
