package storage

// The webhooks store (storage/hookstore): its types, statuses and errors
// under their storage names.

import "github.com/agentd/agentd/storage/hookstore"

// DeliveryClaim identifies one claim of due deliveries.
type DeliveryClaim = hookstore.DeliveryClaim

// DeliveryJob is a claimed delivery with what sending it needs.
type DeliveryJob = hookstore.DeliveryJob

// DeliveryResult is how one claimed attempt went, and what comes next.
type DeliveryResult = hookstore.DeliveryResult

// EndpointFailure is when an endpoint that fails every attempt is disabled:
// its first failure since the last success is older than After.
type EndpointFailure = hookstore.EndpointFailure

// Delivery is one event owed to one endpoint, with its attempts.
type Delivery = hookstore.Delivery

// DeliveryAttempt is one HTTP attempt of a delivery.
type DeliveryAttempt = hookstore.DeliveryAttempt

// DeliveryFilter selects deliveries of one endpoint, newest event first.
type DeliveryFilter = hookstore.DeliveryFilter

// WebhookEndpoint is a client's receiver of events.
type WebhookEndpoint = hookstore.WebhookEndpoint

// WebhookPatch changes some fields of an endpoint; nil fields stay.
type WebhookPatch = hookstore.WebhookPatch

// Constants of hookstore.
const (
	DeliveryPending    = hookstore.DeliveryPending
	DeliveryDelivering = hookstore.DeliveryDelivering
	DeliverySucceeded  = hookstore.DeliverySucceeded
	DeliveryFailed     = hookstore.DeliveryFailed
	DeliveryPaused     = hookstore.DeliveryPaused
)

// Errors of hookstore.
var (
	ErrDeliveryInFlight = hookstore.ErrDeliveryInFlight
	ErrWebhookDisabled  = hookstore.ErrWebhookDisabled
)
