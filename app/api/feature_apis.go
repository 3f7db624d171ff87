package api

import (
	agentsapi "github.com/agentd/agentd/app/api/agents"
	kbapi "github.com/agentd/agentd/app/api/kb"
	listingsapi "github.com/agentd/agentd/app/api/listings"
)

// newFeatureAPIs builds the handlers of agents, the knowledge base and
// listings (app/api/agents, app/api/kb, app/api/listings) over the services
// New was given. Run after newAnalysisAPI: an agent's analysis plan goes
// through it.
func (s *Server) newFeatureAPIs() {
	s.agentsAPI = agentsapi.New(agentsapi.Deps{Agents: s.agents, Plans: s.analysis})
	s.kbAPI = kbapi.New(kbapi.Deps{KB: s.kb, Log: s.log})
	s.listingsAPI = listingsapi.New(listingsapi.Deps{Listings: s.listings})
}
