package conversations

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/errs"
)

// Bounds on the work one message can cause (issue 32): a model answering
// 64 calls five rounds in a row made 320 signed tool POSTs of up to 10 s
// each, one after another, about 3,200 s holding the conversation's only
// stream slot.
const (
	// MaxToolCallsPerAnswer is how many tool calls of one model answer
	// run; the others get a "tool call limit reached" result.
	MaxToolCallsPerAnswer = 8
	// MaxToolCallsPerTurn is how many tool calls run in one turn, over all
	// its rounds.
	MaxToolCallsPerTurn = 16
	// MaxParallelTools is how many tool calls of one answer run at once.
	MaxParallelTools = 4
	// DefaultTurnTimeout bounds a whole turn: retrieval, every model round
	// and every tool call (Config.TurnTimeout, serve's --turn-timeout).
	DefaultTurnTimeout = 120 * time.Second
)

// errTurnTimeout is the cause of a turn's context past its deadline.
var errTurnTimeout = errors.New("turn deadline")

// turnTimeout is a turn past its deadline: a gateway timeout (504, an
// event: error on streams), naming the bound.
func (s *Service) turnTimeout() error {
	e := errs.New(errs.GatewayTimeout, fmt.Sprintf("the turn took longer than %s (the turn deadline, --turn-timeout): "+
		"the model and the agent's tools did not finish in time", s.cfg.TurnTimeout))
	e.Code = "TURN_TIMEOUT"
	return e
}

// withTurnDeadline runs fn under the turn deadline and turns its end into
// turnTimeout, whatever error the model or a tool made of it.
func (s *Service) withTurnDeadline(ctx context.Context, fn func(ctx context.Context) (result, error)) (result, error) {
	tctx, cancel := context.WithTimeoutCause(ctx, s.cfg.TurnTimeout, errTurnTimeout)
	defer cancel()
	res, err := fn(tctx)
	if ctx.Err() == nil && errors.Is(context.Cause(tctx), errTurnTimeout) {
		return result{}, s.turnTimeout()
	}
	return res, err
}

// limitReached is what the model gets for a call past a bound.
func limitReached(bound string, n int) string {
	return toolError("tool call limit reached: at most %d tool calls %s; answer with what you have", n, bound)
}

// runTools runs the calls of one answer, at most MaxParallelTools at once,
// and returns their results in the calls' order. used counts the turn's
// calls so far (MaxToolCallsPerTurn); calls past a bound are not run.
func (s *Service) runTools(ctx context.Context, in runInput, k agents.Knowledge, ours map[string]agentTool,
	calls []llm.ToolCall, used *int, res *result) []string {
	out := make([]string, len(calls))
	sem := make(chan struct{}, MaxParallelTools)
	var wg sync.WaitGroup
	var mu sync.Mutex // res (citations) is shared by the calls
	cite := func(c Citation) int {
		mu.Lock()
		defer mu.Unlock()
		var n int
		res.citations, n = addCitation(res.citations, c)
		return n
	}
	for i, c := range calls {
		switch {
		case i >= MaxToolCallsPerAnswer:
			out[i] = limitReached("per answer", MaxToolCallsPerAnswer)
			continue
		case *used >= MaxToolCallsPerTurn:
			out[i] = limitReached("per message", MaxToolCallsPerTurn)
			continue
		}
		*used++
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := s.runTool(ctx, in, k, ours, c, cite)
			mu.Lock()
			out[i] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
