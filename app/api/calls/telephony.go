package calls

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/calls"
)

// ResultBodyLimit is the body limit of POST /api/v1/calls/{id}/result.
const ResultBodyLimit = calls.ResultBodyLimit

// callResult is POST /api/v1/calls/{id}/result: the voice agent in the
// call's room records its summary, transcript, outcome and metadata; the
// call record is returned.
func (h *Handlers) CallResult(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var req calls.ResultRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	rec, msg, err := h.d.Calls.RecordResult(r.Context(), httpx.OrgID(r), p.ByName("id"), req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, DataMessage[calls.Record]{Data: rec, Message: msg})
	return nil
}

// webhookReceived is the answer to an accepted webhook.
type webhookReceived struct {
	Received bool `json:"received"`
}

// liveKitWebhook is POST /api/v1/telephony/livekit/webhook. The signature
// covers the raw body, so the body and the Authorization header go to
// app/calls as they came.
func (h *Handlers) LiveKitWebhook(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if err := h.d.Calls.CheckLiveKitWebhooks(); err != nil {
		return err
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return err
	}
	if err := h.d.Calls.LiveKitWebhook(r.Context(), r.Header.Get("Authorization"), body); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, webhookReceived{Received: true})
	return nil
}
