package app

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/dial"
)

// liveKitWebhook is POST /api/v1/telephony/livekit/webhook. LiveKit signs
// each webhook with the API key (Authorization: an HS256 token whose sha256
// claim is the body's hash); HandleWebhook verifies it, refuses replays, and
// wakes the Dial of this process waiting for the room. An event ending a
// call that no Dial here took (the call is dialled by another agentd on the
// same database, or its process restarted) is written to the database:
// completed with its duration, only while the call is still active on that
// attempt in that room. Forged (401) and replayed (409) webhooks change
// nothing.
func (s *Server) liveKitWebhook(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	lk := s.liveKit()
	if lk == nil {
		return notFound("LiveKit webhooks are not served: the server does not run --dialer livekit")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large (max %d bytes)", mbe.Limit))
		}
		return badRequest("could not read request body")
	}
	ev, err := lk.HandleWebhook(r.Context(), r.Header.Get("Authorization"), body)
	switch {
	case errors.Is(err, dial.ErrWebhookReplay):
		return &Error{Kind: errs.Conflict, Message: "webhook event already received", Err: err}
	case errors.Is(err, dial.ErrWebhookInvalid):
		return &Error{Kind: errs.Unauthenticated, Message: err.Error()}
	case err != nil:
		return err
	}
	completed := false
	if ev.EndsCall && !ev.Delivered && ev.CallID != "" {
		end := ev.CreatedAt
		if end.IsZero() {
			end = s.now()
		}
		completed, err = s.db.CompleteCallFromWebhook(r.Context(), ev.CallID, ev.Attempt, ev.RoomName, end)
		if err != nil {
			return err
		}
	}
	s.log.InfoContext(r.Context(), "livekit webhook", "event", ev.Event, "id", ev.ID, "room", ev.RoomName,
		"call", ev.CallID, "attempt", ev.Attempt, "endsCall", ev.EndsCall, "delivered", ev.Delivered,
		"completed", completed)
	writeJSON(w, http.StatusOK, map[string]any{"received": true})
	return nil
}
