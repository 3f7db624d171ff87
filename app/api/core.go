package api

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/errs"
)

type healthView struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// health is GET /healthz: the process answers and the database too.
func (s *Server) health(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if _, err := s.stores.Epoch.AuthEpoch(r.Context()); err != nil {
		return &Error{Kind: errs.Unavailable, Message: errs.DBUnavailable, Err: err}
	}
	httpx.WriteJSON(w, http.StatusOK, healthView{Status: "ok", Version: s.cfg.Version})
	return nil
}
