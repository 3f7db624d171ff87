package api

import analysisapi "github.com/agentd/agentd/app/api/analysis"

// newAnalysisAPI builds the analysis handlers (app/analysisapi) on this
// server's request helpers; app/features builds the service they use.
func (s *Server) newAnalysisAPI() *analysisapi.Handlers {
	return analysisapi.New(analysisapi.Deps{OrgID: orgID, ReadBody: readBody, Decode: decodeBytes, WriteData: s.writeV2})
}
