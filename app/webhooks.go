package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/safehttp"
	"github.com/agentd/agentd/storage"
)

// WebhooksConfig configures event delivery (app/events).
type WebhooksConfig struct {
	// AllowPrivate lets receivers live on loopback, private and link-local
	// addresses (--webhook-allow-private): on-premises receivers and tests.
	AllowPrivate bool
	Timeout      time.Duration   // per request; default 10 s
	Lease        time.Duration   // delivery claim lease; default Timeout + 20 s
	Poll         time.Duration   // look for other processes' events; default 1 s
	Concurrency  int             // requests in flight; default 64
	Schedule     []time.Duration // retry delays; default events.Backoff
	KeepAlive    time.Duration   // event stream keep-alive; default 15 s
	DisableAfter time.Duration   // an endpoint failing everything this long is disabled; default 24 h
	// Resolver, when set, resolves receiver hosts (tests).
	Resolver safehttp.Resolver
	// Disabled turns the delivery worker off (benchmarks of the write path).
	Disabled bool
}

// webhooksState is what the webhook and event handlers share.
type webhooksState struct {
	svc     *events.Service
	worker  *events.Worker
	stream  events.StreamConfig
	streams context.Context // ends when the server stops, closing event streams
}

// EventViews are the GET views events carry, wired here because the
// resources' views live in package app today. When a feature package takes
// its view over (app/calls, app/kb, app/listings), its line below becomes
// that package's function; cmd installs the same views for CLI writes.
func EventViews() events.Views {
	return events.Views{
		Call:    eventCallView,
		Source:  eventSourceView,
		Listing: eventListingView,
	}
}

// wireWebhooks installs the event views on the database, builds the
// webhook service and starts the delivery worker.
func (a *App) wireWebhooks(ctx context.Context) error {
	cfg := a.cfg.Webhooks
	events.Install(a.db, EventViews())
	client := safehttp.New(safehttp.Options{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver, MaxBody: events.MaxResponse})
	streams, stop := context.WithCancel(context.Background())
	a.srv.webhooks = webhooksState{
		svc:     &events.Service{DB: a.db, Guard: client},
		stream:  events.StreamConfig{Poll: cfg.Poll, KeepAlive: cfg.KeepAlive},
		streams: streams,
	}
	a.goWorker(func(ctx context.Context) error { <-ctx.Done(); stop(); return nil })
	a.onClose(func() error { stop(); return nil })
	if cfg.Disabled {
		return nil
	}
	w := events.NewWorker(events.WorkerConfig{DB: a.db, Sender: client, Log: a.log, Concurrency: cfg.Concurrency,
		Timeout: cfg.Timeout, Lease: cfg.Lease, Poll: cfg.Poll, Schedule: cfg.Schedule, DisableAfter: cfg.DisableAfter})
	a.srv.webhooks.worker = w
	a.goWorker(w.Run)
	return nil
}

// eventCallView is a call as GET /api/v1/calls/{id} shows it, from a
// snapshot taken inside the event's transaction (GetCallRecord's shape:
// the record, the voice agent's result, the attempt history).
func eventCallView(s storage.CallSnapshot) any {
	rec := callRecord(s.Call)
	v := &CallResultView{Transcript: json.RawMessage("null")}
	rec.CallResultView = v
	if r := s.Result; r != nil {
		if len(r.Transcript) > 0 {
			v.Transcript = r.Transcript
		}
		v.Outcome = r.Outcome
		v.ResultUpdatedAt = callTimePtr(&r.UpdatedAt)
		if r.Summary != nil {
			rec.Summary = r.Summary
		}
	}
	for _, a := range s.Attempts {
		ca := CallAttempt{Attempt: a.Attempt, Status: a.Status, FailureReason: callStrPtr(a.FailureReason),
			RoomID: callStrPtr(a.RoomID), Duration: a.Duration, StartedAt: formatTime(a.StartedAt), EndedAt: callTimePtr(a.EndedAt)}
		if a.SIPCode != 0 {
			code := a.SIPCode
			ca.SIPCode = &code
		}
		rec.AttemptHistory = append(rec.AttemptHistory, ca)
	}
	return rec
}

// sourceEventView is a knowledge source as GET /api/v1/kb/sources lists
// it, plus the collection it belongs to.
type sourceEventView struct {
	ID           string          `json:"id"`
	CollectionID string          `json:"collectionId"`
	ExternalID   string          `json:"externalId"`
	Title        string          `json:"title"`
	Status       string          `json:"status"`
	ChunkCount   int             `json:"chunkCount"`
	FileSize     int             `json:"fileSize"`
	Error        *string         `json:"error"`
	ContentRole  string          `json:"contentRole"`
	CreatedAt    string          `json:"createdAt"`
	UpdatedAt    string          `json:"updatedAt"`
	Metadata     json.RawMessage `json:"metadata"`
}

func eventSourceView(s storage.Source) any {
	return sourceEventView{ID: s.ID, CollectionID: s.CollectionID, ExternalID: s.ExternalID, Title: s.Title,
		Status: s.Status, ChunkCount: s.ChunkCount, FileSize: s.FileSize, Error: s.Error, ContentRole: s.ContentRole,
		CreatedAt: formatTime(s.CreatedAt), UpdatedAt: formatTime(s.UpdatedAt), Metadata: json.RawMessage(s.Metadata)}
}

// listingEventView is a listing as GET /api/v1/listings/sync lists it.
type listingEventView struct {
	ID         string  `json:"id"`
	ExternalID string  `json:"externalId"`
	Title      string  `json:"title"`
	Price      any     `json:"price"`
	Status     string  `json:"status"`
	SourceURL  *string `json:"sourceUrl"`
	UpdatedAt  string  `json:"updatedAt"`
}

func eventListingView(l storage.Listing) any {
	var src *string
	if l.SourceURL != "" {
		src = &l.SourceURL
	}
	return listingEventView{ID: l.ID, ExternalID: l.ExternalID, Title: l.Title, Price: priceOf(l), Status: "active",
		SourceURL: src, UpdatedAt: formatTime(l.UpdatedAt)}
}
