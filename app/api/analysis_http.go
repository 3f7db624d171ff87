package api

import (
	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/analysis"
	analysisapi "github.com/agentd/agentd/app/api/analysis"
)

// newAnalysisAPI builds the analysis handlers (app/analysisapi) on this
// server's request helpers; app/features builds the service they use.
func (s *Server) newAnalysisAPI(svc *analysis.Service, tests agenttest.Runner) *analysisapi.Handlers {
	return analysisapi.New(analysisapi.Deps{Analysis: svc, Tests: &tests, OrgID: orgID, ReadBody: readBody, Decode: decodeBytes, WriteData: s.writeV2})
}
