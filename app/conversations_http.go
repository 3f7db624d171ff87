package app

import (
	"context"

	"github.com/agentd/agentd/app/convapi"
)

// newConvAPI builds the conversation handlers (app/convapi) on this
// server's request helpers, so bodies decode and errors shape as elsewhere.
func (s *Server) newConvAPI() *convapi.Handlers {
	return convapi.New(convapi.Deps{Calls: s.f.Stores.Calls, Agents: s.f.Stores.Agents, Log: s.log, OrgID: orgID, ReadBody: readBody,
		Decode: decodeBytes, WriteData: s.writeV2, StreamSlot: s.answerSlot, Status: func(err error) (int, string) {
			e := toError(err)
			return status(e), e.Message
		}, Analysis: func(ctx context.Context, org, id string) (any, error) {
			return s.analysis.ConversationAnalysisOf(ctx, org, id)
		}})
}
