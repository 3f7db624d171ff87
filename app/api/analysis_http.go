package api

import (
	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/analysis"
	analysisapi "github.com/agentd/agentd/app/api/analysis"
)

// newAnalysisAPI builds the analysis handlers (app/api/analysis) over the
// service and the agent test runner.
func (s *Server) newAnalysisAPI(svc *analysis.Service, tests agenttest.Runner) *analysisapi.Handlers {
	return analysisapi.New(analysisapi.Deps{Analysis: svc, Tests: &tests})
}
