package api

import (
	convapi "github.com/agentd/agentd/app/api/conversations"
	"github.com/agentd/agentd/app/conversations"
)

// newConvAPI builds the conversation handlers (app/api/conversations) over
// the engine; a conversation's analysis is read through the analysis
// handlers.
func (s *Server) newConvAPI(engine *conversations.Service) *convapi.Handlers {
	return convapi.New(convapi.Deps{Conv: engine, Calls: s.stores.Calls, Agents: s.stores.Agents, Log: s.log, Analysis: s.analysis, Slots: s})
}
