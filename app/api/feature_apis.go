package api

import (
	agentsapi "github.com/agentd/agentd/app/api/agents"
	apihelp "github.com/agentd/agentd/app/api/httpx"
	kbapi "github.com/agentd/agentd/app/api/kb"
	listingsapi "github.com/agentd/agentd/app/api/listings"
)

// newFeatureAPIs builds the handlers of agents, the knowledge base and
// listings (app/agentsapi, app/kbapi, app/listingsapi) on this server's
// request helpers, over the services New was given. Run after
// newAnalysisAPI: an agent's analysis plan goes through it.
func (s *Server) newFeatureAPIs() {
	help := apihelp.Helpers{OrgID: orgID, Decode: decodeJSON, WriteJSON: writeJSON, Now: s.now}
	s.agentsAPI = agentsapi.New(agentsapi.Deps{Helpers: help, Agents: s.agents, Plans: s.analysis})
	s.kbAPI = kbapi.New(kbapi.Deps{Helpers: help, KB: s.kb, Log: s.log, LogAttrs: logAttrs})
	s.listingsAPI = listingsapi.New(listingsapi.Deps{Helpers: help, Listings: s.listings})
}
