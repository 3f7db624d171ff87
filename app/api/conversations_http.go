package api

import (
	"context"

	convapi "github.com/agentd/agentd/app/api/conversations"
	"github.com/agentd/agentd/app/conversations"
)

// newConvAPI builds the conversation handlers (app/convapi) on this
// server's request helpers, so bodies decode and errors shape as elsewhere.
func (s *Server) newConvAPI(engine *conversations.Service) *convapi.Handlers {
	return convapi.New(convapi.Deps{Conv: engine, Calls: s.stores.Calls, Agents: s.stores.Agents, Log: s.log, OrgID: orgID, ReadBody: readBody,
		Decode: decodeBytes, WriteData: s.writeV2, Status: func(err error) (int, string) {
			e := toError(err)
			return status(e), e.Message
		}, Analysis: func(ctx context.Context, org, id string) (any, error) {
			return s.analysis.ConversationAnalysisOf(ctx, org, id)
		}})
}
