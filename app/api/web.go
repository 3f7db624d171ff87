package api

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/web"
)

// newSite builds the dashboard on the server's clock, cross-origin check
// and error mapping. Its templates are embedded: a parse error is a bug.
func (s *Server) newSite(d Deps) *web.Site {
	svcs := web.Services{Recordings: d.Recordings, Agents: d.Agents, Calls: d.Calls, Analysis: d.Analysis, Conversations: d.Conversations,
		DNC: d.DNC, Settings: d.Settings, Events: d.Events, KB: d.KB, Listings: d.Listings, Dashboard: d.Dashboard}
	site, err := web.New(web.Config{Access: s.access, Services: svcs, Log: s.log, Now: s.now, CrossOrigin: s.crossOrigin,
		SecureCookie: strings.HasPrefix(s.cfg.PublicURL, "https://"), PublicURL: strings.TrimSuffix(s.cfg.PublicURL, "/"),
		Explain: func(err error) (int, string) {
			e := httpx.ToError(err)
			return httpx.StatusOf(e), e.Message
		}})
	if err != nil {
		panic("app: dashboard templates: " + err.Error())
	}
	return site
}

// page registers a dashboard route: HTML, its own session check (the
// package web), no API middleware, and not in the OpenAPI document.
func (s *Server) page(rt web.Route) {
	s.mux.add(rt.Method, rt.Path, func(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
		for _, kv := range p {
			r.SetPathValue(kv.Key, kv.Value)
		}
		rt.Handler.ServeHTTP(w, r)
	})
}
