package app

import "github.com/agentd/agentd/app/analysisapi"

// newAnalysisAPI builds the analysis handlers (app/analysisapi) on this
// server's request helpers; app/features builds the service they use.
func (s *Server) newAnalysisAPI() *analysisapi.Handlers {
	return analysisapi.New(analysisapi.Deps{OrgID: orgID, ReadBody: readBody, Decode: decodeBytes, WriteData: s.writeV2})
}
