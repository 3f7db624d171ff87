package campaigns

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	callsapi "github.com/agentd/agentd/app/api/calls"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/settings"
	"github.com/agentd/agentd/internal/apitime"
)

// Campaigns and compliance endpoints: batches as campaigns (app/calls), the
// do-not-call list (app/dnc), both in the calls family, and the
// organization's settings (app/settings, /v2).

// Deps are the services the campaign and compliance handlers call.
type Deps struct {
	Calls    *calls.Service
	DNC      *dnc.Service
	Settings *settings.Service
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// listBatches is GET /api/v1/calls/batches.
func (h *Handlers) ListBatches(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	page, err := h.d.Calls.ListBatchesQuery(r.Context(), httpx.OrgID(r), r.URL.Query())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsapi.Data[calls.BatchPage]{Data: page})
	return nil
}

// getBatch is GET /api/v1/calls/batches/{id}.
func (h *Handlers) GetBatch(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	b, err := h.d.Calls.GetBatch(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsapi.Data[calls.BatchView]{Data: b})
	return nil
}

// batchAction answers pause, resume and cancel of a batch.
func (h *Handlers) BatchAction(act func(*calls.Service, *http.Request, string) (calls.BatchView, string, error)) func(http.ResponseWriter, *http.Request, httprouter.Params) error {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		b, msg, err := act(h.d.Calls, r, p.ByName("id"))
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, callsapi.DataMessage[calls.BatchView]{Data: b, Message: msg})
		return nil
	}
}

func PauseBatch(svc *calls.Service, r *http.Request, id string) (calls.BatchView, string, error) {
	return svc.PauseBatch(r.Context(), httpx.OrgID(r), id)
}

func ResumeBatch(svc *calls.Service, r *http.Request, id string) (calls.BatchView, string, error) {
	return svc.ResumeBatch(r.Context(), httpx.OrgID(r), id)
}

func CancelBatch(svc *calls.Service, r *http.Request, id string) (calls.BatchView, string, error) {
	return svc.CancelBatch(r.Context(), httpx.OrgID(r), id)
}

// addDNC is POST /api/v1/dnc.
func (h *Handlers) AddDNC(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req dnc.AddRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	out, err := h.d.DNC.Add(r.Context(), httpx.OrgID(r), req, httpx.Now())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsapi.DataMessage[dnc.Added]{Data: out, Message: "Numbers added to the do-not-call list"})
	return nil
}

// removeDNC is DELETE /api/v1/dnc.
func (h *Handlers) RemoveDNC(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req dnc.RemoveRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	out, err := h.d.DNC.Remove(r.Context(), httpx.OrgID(r), req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsapi.DataMessage[dnc.Removed]{Data: out, Message: "Numbers removed from the do-not-call list"})
	return nil
}

// listDNC is GET /api/v1/dnc.
func (h *Handlers) ListDNC(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	o, err := dnc.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := h.d.DNC.List(r.Context(), httpx.OrgID(r), o)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsapi.Data[dnc.Page]{Data: page})
	return nil
}

// getSettings is GET /api/v2/organization/settings.
func (h *Handlers) GetSettings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	st, err := h.d.Settings.Get(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.Envelope[settings.Settings]{Data: st, Meta: httpx.Meta{Timestamp: apitime.Format(httpx.Now())}})
	return nil
}

// patchSettings is PATCH /api/v2/organization/settings.
func (h *Handlers) PatchSettings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var p settings.Patch
	if err := httpx.Decode(r, &p); err != nil {
		return err
	}
	st, err := h.d.Settings.Update(r.Context(), httpx.OrgID(r), p, httpx.Now())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.Envelope[settings.Settings]{Data: st, Meta: httpx.Meta{Timestamp: apitime.Format(httpx.Now())}})
	return nil
}
