package calls

import (
	"context"
	"errors"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/livekitdial"
	"github.com/agentd/agentd/internal/errs"
)

// liveKit is the LiveKit dialer when the server dials with LiveKit (also
// when given as Config.DialerImpl), else nil: webhooks are then not served.
func (s *Service) liveKit() *livekitdial.LiveKit {
	lk, _ := s.dialer.(*livekitdial.LiveKit)
	return lk
}

// CheckLiveKitWebhooks is nil when this server takes LiveKit webhooks (it
// dials with LiveKit), else a not-found error; the HTTP layer asks before
// it reads the body.
func (s *Service) CheckLiveKitWebhooks() error {
	if s.liveKit() == nil {
		return errs.New(errs.NotFound, "LiveKit webhooks are not served: the server does not run --dialer livekit")
	}
	return nil
}

// LiveKitWebhook handles a webhook LiveKit sent: auth is its Authorization
// header (an HS256 token signed with the API key whose sha256 claim is the
// body's hash), body the raw body. The dialer verifies it, refuses
// replays, and wakes the Dial of this process waiting for the room. An
// event ending a call that no Dial here took (the call is dialled by
// another agentd on the same database, or its process restarted) is
// written to the database: completed with its duration, only while the
// call is still active on that attempt in that room. Forged
// (unauthenticated) and replayed (conflict) webhooks change nothing.
func (s *Service) LiveKitWebhook(ctx context.Context, auth string, body []byte) error {
	lk := s.liveKit()
	if lk == nil {
		return s.CheckLiveKitWebhooks()
	}
	ev, err := lk.HandleWebhook(ctx, auth, body)
	switch {
	case errors.Is(err, livekitdial.ErrWebhookReplay):
		return &errs.Error{Kind: errs.Conflict, Message: "webhook event already received", Err: err}
	case errors.Is(err, livekitdial.ErrWebhookInvalid):
		return &errs.Error{Kind: errs.Unauthenticated, Message: err.Error()}
	case err != nil:
		return err
	}
	completed := false
	if ev.EndsCall && !ev.Delivered && ev.CallID != "" {
		end := ev.CreatedAt
		if end.IsZero() {
			end = s.now()
		}
		completed, err = s.db.Calls.CompleteCallFromWebhook(ctx, ev.CallID, ev.Attempt, ev.RoomName, end)
		if err != nil {
			return err
		}
	}
	s.log.InfoContext(ctx, "livekit webhook", "event", ev.Event, "id", ev.ID, "room", ev.RoomName,
		"call", ev.CallID, "attempt", ev.Attempt, "endsCall", ev.EndsCall, "delivered", ev.Delivered,
		"completed", completed, "inbound", ev.Inbound || ev.InboundEnds)
	return s.liveKitInbound(ctx, ev)
}

// liveKitInbound records a call that came in through an inbound trunk (a
// SIP participant joined a room agentd did not create) and ends it when
// the participant leaves or the room finishes. A number no voice agent has
// is only logged: LiveKit needs no answer but 200.
func (s *Service) liveKitInbound(ctx context.Context, ev livekitdial.WebhookEvent) error {
	at := ev.CreatedAt
	if at.IsZero() {
		at = s.now()
	}
	in := dial.InboundCall{From: ev.From, To: ev.To, Dialer: "livekit", Key: ev.ParticipantIdentity, RoomID: ev.RoomName, At: at}
	switch {
	case ev.Inbound:
		if _, err := s.InboundStarted(ctx, in); errors.Is(err, dial.ErrNoAgent) {
			s.log.InfoContext(ctx, "livekit inbound: no voice agent for the number", "to", ev.To, "room", ev.RoomName)
		} else if err != nil {
			return err
		}
	case ev.InboundEnds:
		s.InboundEnded(ctx, in, dial.StatusCompleted, "")
	}
	return nil
}
