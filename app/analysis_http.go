package app

import (
	"context"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/analysisapi"
	"github.com/agentd/agentd/app/llm"
)

// newAnalysisAPI builds the analysis handlers (app/analysisapi) on this
// server's request helpers.
func (s *Server) newAnalysisAPI() *analysisapi.Handlers {
	return analysisapi.New(analysisapi.Deps{OrgID: orgID, ReadBody: readBody, Decode: decodeBytes, WriteData: s.writeV2})
}

// wireAnalysis starts post-call analysis on the configured model: the
// queue's worker runs with the server.
func (a *App) wireAnalysis(context.Context) error {
	model, err := llm.New(a.cfg.LLM)
	if err != nil {
		return err
	}
	svc := analysis.New(analysis.Deps{Store: a.db.Analyses, Calls: a.db, Messages: a.db.Conversations, Log: a.log},
		analysis.Config{Model: model, Poll: a.cfg.AnalysisPoll, RetryBase: a.cfg.AnalysisRetry})
	a.srv.analysis.Use(svc)
	a.goWorker(svc.Run)
	return nil
}
