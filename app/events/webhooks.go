package events

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/signing"
	"github.com/agentd/agentd/internal/wakeup"
	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// URLGuard decides whether a receiver URL may be called at all: the
// server-side request forgery rules (internal/safehttp). Its error message
// says why, for the client.
type URLGuard interface {
	CheckURL(ctx context.Context, rawURL string) error
}

// Limits of an endpoint.
const (
	maxURL         = 2048
	maxDescription = 500
	maxEventTypes  = 50
	// RotationOverlap is how long the previous secret keeps signing after a
	// rotation, so receivers can switch without missing a delivery.
	RotationOverlap = 24 * time.Hour
)

// Service holds the webhook use cases over storage.
type Service struct {
	DB    Deps
	Guard URLGuard // nil: only the URL's syntax is checked
}

// Deps are the stores the events feature uses.
type Deps struct {
	Webhooks *hookstore.Webhooks
	Events   *eventstore.Events
	// The wake-ups of new events and new deliveries from any process
	// (storage.Stores.Waker); nil: this process's events and the poll.
	NewEvents, NewDeliveries wakeup.Waker
}

// wake is w's next wake-up; nil (never) without one.
func wake(w wakeup.Waker) <-chan struct{} { return wakeup.Next(w) }

// idlePoll is how long an idle reader may sleep between polls.
func (d Deps) idlePoll(poll time.Duration) time.Duration {
	return wakeup.IdlePoll(d.NewEvents, poll)
}

// New returns the events feature over its stores; guard checks endpoint
// addresses (nil: only the URL's syntax is checked).
func New(d Deps, guard URLGuard) *Service { return &Service{DB: d, Guard: guard} }

// Webhook is an endpoint as the API shows it, never with its secret.
type Webhook struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	Description    string   `json:"description"`
	Enabled        bool     `json:"enabled"`
	DisabledReason *string  `json:"disabledReason"`
	DisabledAt     *string  `json:"disabledAt"`
	// PreviousSecretExpiresAt is when the secret replaced by the last
	// rotation stops signing (null when none still signs).
	PreviousSecretExpiresAt *string `json:"previousSecretExpiresAt"`
	CreatedAt               string  `json:"createdAt"`
	UpdatedAt               string  `json:"updatedAt"`
}

// WebhookSecret is an endpoint with its signing secret: only the answer of
// a creation or a rotation, once.
type WebhookSecret struct {
	Webhook
	Secret string `json:"secret"`
}

// webhookView shapes a stored endpoint.
func webhookView(e hookstore.WebhookEndpoint, now time.Time) Webhook {
	w := Webhook{ID: e.ID, URL: e.URL, Events: e.Events, Description: e.Description, Enabled: e.Enabled,
		DisabledReason: strPtr(e.DisabledReason), DisabledAt: timePtr(e.DisabledAt),
		CreatedAt: formatTime(e.CreatedAt), UpdatedAt: formatTime(e.UpdatedAt)}
	if e.PrevSecret != "" && e.PrevSecretUntil != nil && now.Before(*e.PrevSecretUntil) {
		w.PreviousSecretExpiresAt = timePtr(e.PrevSecretUntil)
	}
	return w
}

// Input is the body of a webhook create (url and events required) or
// update (every field optional). Pointers tell "absent" from "empty".
type Input struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Description *string   `json:"description"`
	Enabled     *bool     `json:"enabled"`
}

// checkURL validates a receiver URL: absolute http or https with a host,
// at most 2,048 characters, and allowed by the guard.
func (s *Service) checkURL(ctx context.Context, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return "", errs.InvalidField("url", "is required")
	case len(raw) > maxURL:
		return "", errs.InvalidField("url", fmt.Sprintf("must be at most %d characters", maxURL))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return "", errs.InvalidField("url", "must be an absolute http or https URL")
	}
	if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" {
		return "", errs.InvalidField("url", "must use http or https")
	}
	if s.Guard != nil {
		if err := s.Guard.CheckURL(ctx, raw); err != nil {
			return "", errs.InvalidField("url", err.Error())
		}
	}
	return raw, nil
}

// checkEvents validates a subscription: 1 to 50 catalogue types, or "*"
// for all of them (stored as ["*"] alone). Repeats are dropped.
func checkEvents(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, errs.InvalidField("events", "must list at least one event type, or \"*\" for all")
	}
	if len(in) > maxEventTypes {
		return nil, errs.InvalidField("events", fmt.Sprintf("must list at most %d event types", maxEventTypes))
	}
	out := []string{}
	for i, t := range in {
		t = strings.TrimSpace(t)
		switch {
		case t == "*":
			return []string{"*"}, nil
		case !knownType(t):
			return nil, errs.InvalidField("events."+strconv.Itoa(i), strconv.Quote(t)+" is not an event type (see the event catalogue)")
		case !slices.Contains(out, t):
			out = append(out, t)
		}
	}
	return out, nil
}

func checkDescription(d string) (string, error) {
	d = strings.TrimSpace(d)
	if utf8.RuneCountInString(d) > maxDescription {
		return "", errs.InvalidField("description", fmt.Sprintf("must be at most %d characters", maxDescription))
	}
	return d, nil
}

// notFound maps storage's not-found to the client's message.
func notFound(err error, what string) error {
	if errors.Is(err, sqldb.ErrNotFound) {
		return errs.Wrap(errs.NotFound, what+" not found", err)
	}
	return err
}

// validateNew checks a create's input and returns the endpoint to store.
func (s *Service) validateNew(ctx context.Context, in Input) (hookstore.WebhookEndpoint, error) {
	var e hookstore.WebhookEndpoint
	if in.URL == nil {
		return e, errs.InvalidField("url", "is required")
	}
	if in.Events == nil {
		return e, errs.InvalidField("events", "is required: a list of event types, or [\"*\"] for all")
	}
	var err error
	if e.URL, err = s.checkURL(ctx, *in.URL); err != nil {
		return e, err
	}
	if e.Events, err = checkEvents(*in.Events); err != nil {
		return e, err
	}
	if in.Description != nil {
		if e.Description, err = checkDescription(*in.Description); err != nil {
			return e, err
		}
	}
	return e, nil
}

// Create stores an endpoint and returns it with its secret, shown once.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (WebhookSecret, error) {
	nw, err := s.validateNew(ctx, in)
	if err != nil {
		return WebhookSecret{}, err
	}
	if have, err := s.DB.Webhooks.ListWebhooks(ctx, orgID); err != nil {
		return WebhookSecret{}, err
	} else if len(have) >= MaxEndpointsPerOrg {
		return WebhookSecret{}, errs.New(errs.Conflict, fmt.Sprintf("an organization has at most %d webhook endpoints: delete one first", MaxEndpointsPerOrg))
	}
	secret := signing.NewSecret()
	nw.OrgID, nw.Secret = orgID, secret
	e, err := s.DB.Webhooks.CreateWebhook(ctx, nw)
	if err != nil {
		return WebhookSecret{}, err
	}
	return WebhookSecret{Webhook: webhookView(e, time.Now()), Secret: secret}, nil
}

// MaxEndpointsPerOrg caps an organization's endpoints (issue 27 item 4):
// with the per-organization share of sending slots (WorkerConfig.PerOrg)
// it bounds what one organization's unresponsive receivers can hold.
const MaxEndpointsPerOrg = 50

// List is every endpoint of the organization, oldest first.
func (s *Service) List(ctx context.Context, orgID string) ([]Webhook, error) {
	es, err := s.DB.Webhooks.ListWebhooks(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]Webhook, len(es))
	now := time.Now()
	for i, e := range es {
		out[i] = webhookView(e, now)
	}
	return out, nil
}

// Get reads one endpoint.
func (s *Service) Get(ctx context.Context, orgID, id string) (Webhook, error) {
	e, err := s.DB.Webhooks.GetWebhook(ctx, orgID, id)
	if err != nil {
		return Webhook{}, notFound(err, "webhook")
	}
	return webhookView(e, time.Now()), nil
}

// Update changes the given fields. Enabling a disabled endpoint clears its
// disabled reason and resumes its paused deliveries.
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (Webhook, error) {
	var p hookstore.WebhookPatch
	if in.URL != nil {
		u, err := s.checkURL(ctx, *in.URL)
		if err != nil {
			return Webhook{}, err
		}
		p.URL = &u
	}
	if in.Events != nil {
		types, err := checkEvents(*in.Events)
		if err != nil {
			return Webhook{}, err
		}
		p.Events = types
	}
	if in.Description != nil {
		d, err := checkDescription(*in.Description)
		if err != nil {
			return Webhook{}, err
		}
		p.Description = &d
	}
	p.Enabled = in.Enabled
	e, err := s.DB.Webhooks.UpdateWebhook(ctx, orgID, id, p)
	if err != nil {
		return Webhook{}, notFound(err, "webhook")
	}
	return webhookView(e, time.Now()), nil
}

// Delete removes an endpoint with its deliveries.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return notFound(s.DB.Webhooks.DeleteWebhook(ctx, orgID, id), "webhook")
}

// RotateSecret gives the endpoint a new secret, shown once; deliveries are
// signed with both the new and the previous secret for RotationOverlap.
func (s *Service) RotateSecret(ctx context.Context, orgID, id string) (WebhookSecret, error) {
	secret := signing.NewSecret()
	e, err := s.DB.Webhooks.RotateWebhookSecret(ctx, orgID, id, secret, time.Now().Add(RotationOverlap))
	if err != nil {
		return WebhookSecret{}, notFound(err, "webhook")
	}
	return WebhookSecret{Webhook: webhookView(e, time.Now()), Secret: secret}, nil
}

// Ping is the data of a ping event.
type Ping struct {
	WebhookID string `json:"webhookId"`
	Message   string `json:"message"`
}

// Test logs a ping for the endpoint alone and queues its delivery.
func (s *Service) Test(ctx context.Context, orgID, id string) (Event, error) {
	ev, err := s.DB.Webhooks.PingWebhook(ctx, orgID, id, Ping{WebhookID: id, Message: "Test event from agentd"})
	if errors.Is(err, hookstore.ErrWebhookDisabled) {
		return Event{}, errs.Wrap(errs.Conflict, "webhook is disabled: enable it (PATCH enabled: true) before testing it", err)
	}
	if err != nil {
		return Event{}, notFound(err, "webhook")
	}
	return view(ev), nil
}
