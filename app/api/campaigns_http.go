package api

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/settings"
)

// Campaigns and compliance endpoints: batches as campaigns (app/calls), the
// do-not-call list (app/dnc), both in the calls family, and the
// organization's settings (app/settings, /v2).

// listBatches is GET /api/v1/calls/batches.
func (s *Server) listBatches(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	page, err := s.calls.ListBatchesQuery(r.Context(), httpx.OrgID(r), r.URL.Query())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsData[calls.BatchPage]{Data: page})
	return nil
}

// getBatch is GET /api/v1/calls/batches/{id}.
func (s *Server) getBatch(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	b, err := s.calls.GetBatch(r.Context(), httpx.OrgID(r), p.ByName("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsData[calls.BatchView]{Data: b})
	return nil
}

// batchAction answers pause, resume and cancel of a batch.
func (s *Server) batchAction(act func(*calls.Service, *http.Request, string) (calls.BatchView, string, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		b, msg, err := act(s.calls.Service, r, p.ByName("id"))
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, callsDataMessage[calls.BatchView]{Data: b, Message: msg})
		return nil
	}
}

func pauseBatch(svc *calls.Service, r *http.Request, id string) (calls.BatchView, string, error) {
	return svc.PauseBatch(r.Context(), httpx.OrgID(r), id)
}

func resumeBatch(svc *calls.Service, r *http.Request, id string) (calls.BatchView, string, error) {
	return svc.ResumeBatch(r.Context(), httpx.OrgID(r), id)
}

func cancelBatch(svc *calls.Service, r *http.Request, id string) (calls.BatchView, string, error) {
	return svc.CancelBatch(r.Context(), httpx.OrgID(r), id)
}

// addDNC is POST /api/v1/dnc.
func (s *Server) addDNC(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req dnc.AddRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	out, err := s.dnc.Add(r.Context(), httpx.OrgID(r), req, s.now())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsDataMessage[dnc.Added]{Data: out, Message: "Numbers added to the do-not-call list"})
	return nil
}

// removeDNC is DELETE /api/v1/dnc.
func (s *Server) removeDNC(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req dnc.RemoveRequest
	if err := httpx.Decode(r, &req); err != nil {
		return err
	}
	out, err := s.dnc.Remove(r.Context(), httpx.OrgID(r), req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsDataMessage[dnc.Removed]{Data: out, Message: "Numbers removed from the do-not-call list"})
	return nil
}

// listDNC is GET /api/v1/dnc.
func (s *Server) listDNC(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	o, err := dnc.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := s.dnc.List(r.Context(), httpx.OrgID(r), o)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callsData[dnc.Page]{Data: page})
	return nil
}

// getSettings is GET /api/v2/organization/settings.
func (s *Server) getSettings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	st, err := s.settings.Get(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, envelope[settings.Settings]{Data: st, Meta: metaView{formatTime(s.now())}})
	return nil
}

// patchSettings is PATCH /api/v2/organization/settings.
func (s *Server) patchSettings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var p settings.Patch
	if err := httpx.Decode(r, &p); err != nil {
		return err
	}
	st, err := s.settings.Update(r.Context(), httpx.OrgID(r), p, s.now())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, envelope[settings.Settings]{Data: st, Meta: metaView{formatTime(s.now())}})
	return nil
}
