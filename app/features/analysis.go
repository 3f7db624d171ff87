package features

import (
	"context"

	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/storage"
)

// openAnalysis builds post-call analysis on the configured model (its
// queue's worker runs with the others) and the agent test runner over the
// conversation engine.
func (s *Set) openAnalysis(_ context.Context, cfg Config) error {
	model, err := llm.New(cfg.LLM)
	if err != nil {
		return err
	}
	ac := cfg.Analysis
	ac.Model = model
	ac.ContextTokens = cfg.LLM.ContextTokens
	s.Analysis = analysis.New(analysis.Deps{Store: s.Stores.Analyses, Calls: s.Stores.Calls, Messages: s.Stores.Conversations, Log: s.log,
		Queued: s.Stores.Waker(storage.ChanAnalyses)}, ac)
	s.workers = append(s.workers, s.Analysis.Run)
	s.AgentTests = agenttest.Runner{Engine: s.Conversations, Judge: model}
	return nil
}
