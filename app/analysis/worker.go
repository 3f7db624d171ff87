package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/wakeup"
	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Event types.
const (
	EventCallAnalyzed         = "call.analyzed"
	EventConversationAnalyzed = "conversation.analyzed"
)

// Store is the analysis store the feature uses (storage/analysisstore).
type Store interface {
	Claim(ctx context.Context, owner string, lease time.Duration, max int) ([]analysisstore.Job, error)
	Finish(ctx context.Context, j analysisstore.Job, owner, status string, result json.RawMessage, ev sqldb.PendingEvent) (bool, error)
	Retry(ctx context.Context, j analysisstore.Job, owner string, due time.Time) error
	Renew(ctx context.Context, jobs []analysisstore.Job, owner string, lease time.Duration) error
	NextDue(ctx context.Context) (time.Time, error)
	Get(ctx context.Context, orgID, kind, id string) (analysisstore.Analysis, error)
	SavePlan(ctx context.Context, orgID, agentID string, plan json.RawMessage) error
	Plan(ctx context.Context, orgID, agentID string) (json.RawMessage, error)
	Reanalyze(ctx context.Context, orgID string, f analysisstore.CallFilter) (int, error)
	List(ctx context.Context, orgID, batchID string) ([]analysisstore.Analysis, error)
}

// CallResults reads a call's transcript (storage's calls store).
type CallResults interface {
	GetCallResult(ctx context.Context, callID string) (callstore.CallResult, error)
}

// Messages reads a conversation's messages (storage/convstore).
type Messages interface {
	Messages(ctx context.Context, convID string) ([]convstore.Message, error)
}

// Deps are what the feature uses.
type Deps struct {
	Store    Store
	Calls    CallResults
	Messages Messages
	Log      *slog.Logger
	// Queued, when set, wakes an idle worker when any process queues an
	// analysis (storage.Stores.Waker(ChanAnalyses)); the poll is then a
	// safety net.
	Queued wakeup.Waker
}

// Config tunes the worker.
type Config struct {
	Model       llm.Model     // nil (--llm builtin): every analysis is skipped, saying why
	Concurrency int           // analyses at once; 0: 8
	Lease       time.Duration // how long a claim holds, renewed while it runs; 0: 15 s (a killed process's rows wait that long)
	Poll        time.Duration // how often an idle worker looks; 0: 500 ms
	RetryBase   time.Duration // first wait while the model is down, doubling; 0: 2 s
	RetryMax    time.Duration // 0: 5 minutes
}

// Service is post-call analysis.
type Service struct {
	d     Deps
	cfg   Config
	owner string
	wake  chan struct{}
}

// New builds the service.
func New(d Deps, cfg Config) *Service {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 15 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 2 * time.Second
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = 5 * time.Minute
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d, cfg: cfg, owner: "analysis-" + uuid.NewString(), wake: make(chan struct{}, 1)}
}

// Wake makes an idle worker look at the queue now.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run works the queue until ctx ends; analyses in flight are abandoned at
// shutdown with their lease, and taken again after it runs out.
func (s *Service) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		queued := wakeup.Next(s.d.Queued) // before the claim reads; nil: never
		wait := wakeup.IdlePoll(s.d.Queued, s.cfg.Poll)
		n, err := s.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			s.d.Log.Warn("analysis queue", "err", err)
		}
		if n > 0 {
			continue
		}
		if next, err := s.d.Store.NextDue(ctx); err == nil && !next.IsZero() {
			wait = min(max(time.Until(next), 0), wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-queued:
		case <-t.C:
		}
		t.Stop()
	}
	return nil
}

// RunOnce claims the analyses due now and runs them; n is how many it took.
func (s *Service) RunOnce(ctx context.Context) (int, error) {
	jobs, err := s.d.Store.Claim(ctx, s.owner, s.cfg.Lease, s.cfg.Concurrency*2)
	if err != nil || len(jobs) == 0 {
		return 0, err
	}
	// The leases are renewed while the batch runs: a slow model never
	// loses a row to another worker, and a killed process's rows are free
	// again one lease after its death.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(s.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.d.Store.Renew(ctx, jobs, s.owner, s.cfg.Lease); err != nil && ctx.Err() == nil {
					s.d.Log.Warn("analysis lease", "err", err)
				}
			}
		}
	}()
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	for _, j := range jobs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.run(ctx, j); err != nil && ctx.Err() == nil {
				s.d.Log.Warn("analysis", "kind", j.Kind, "id", j.SubjectID, "err", err)
			}
		}()
	}
	wg.Wait()
	return len(jobs), nil
}

// run analyses one claimed subject and stores the outcome.
func (s *Service) run(ctx context.Context, j analysisstore.Job) error {
	if j.Plan == nil {
		return s.finish(ctx, j, analysisstore.StatusSkipped, Result{Error: "the agent has no analysis plan any more"})
	}
	p, err := ParsePlan(j.Plan)
	if err != nil {
		return s.finish(ctx, j, analysisstore.StatusFailed, Result{Error: "the agent's analysis plan is invalid: " + err.Error()})
	}
	if s.cfg.Model == nil {
		return s.finish(ctx, j, analysisstore.StatusSkipped, Result{Error: "no generative model configured (--llm builtin): analysis needs --llm openai"})
	}
	turns, err := s.transcript(ctx, j)
	if err != nil {
		return err
	}
	if len(turns) == 0 {
		return s.finish(ctx, j, analysisstore.StatusSkipped, Result{Error: "the transcript is empty"})
	}
	res, ok, err := analyze(ctx, s.cfg.Model, p, turns)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// The model is down or too slow: the row stays pending, due later.
		wait := s.cfg.RetryBase << min(j.Attempts, 20)
		if wait > s.cfg.RetryMax || wait <= 0 {
			wait = s.cfg.RetryMax
		}
		if rerr := s.d.Store.Retry(ctx, j, s.owner, time.Now().Add(wait)); rerr != nil {
			return rerr
		}
		return fmt.Errorf("model: %w (retry in %s)", err, wait)
	}
	status := analysisstore.StatusCompleted
	if !ok {
		status = analysisstore.StatusFailed
	}
	return s.finish(ctx, j, status, res)
}

func (s *Service) finish(ctx context.Context, j analysisstore.Job, status string, res Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ev := sqldb.PendingEvent{Type: EventCallAnalyzed, Subject: j.Kind + ":" + j.SubjectID, OrgID: j.OrgID}
	data := EventData{AgentID: j.AgentID, Analysis: view(status, b, &now)}
	if j.Kind == analysisstore.KindCall {
		data.CallID = j.SubjectID
	} else {
		ev.Type, data.ConversationID = EventConversationAnalyzed, j.SubjectID
	}
	ev.Data = data
	_, err = s.d.Store.Finish(ctx, j, s.owner, status, b, ev)
	return err
}

// transcript reads the subject's turns.
func (s *Service) transcript(ctx context.Context, j analysisstore.Job) ([]Turn, error) {
	if j.Kind == analysisstore.KindConversation {
		msgs, err := s.d.Messages.Messages(ctx, j.SubjectID)
		if err != nil {
			return nil, err
		}
		out := make([]Turn, 0, len(msgs))
		for _, m := range msgs {
			out = append(out, Turn{Role: m.Role, Text: m.Content})
		}
		return out, nil
	}
	r, err := s.d.Calls.GetCallResult(ctx, j.SubjectID)
	if errors.Is(err, sqldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var items []struct{ Role, Text string }
	if len(r.Transcript) > 0 {
		if err := json.Unmarshal(r.Transcript, &items); err != nil {
			return nil, fmt.Errorf("call %s transcript: %w", j.SubjectID, err)
		}
	}
	out := make([]Turn, 0, len(items))
	for _, it := range items {
		out = append(out, Turn{Role: it.Role, Text: it.Text})
	}
	return out, nil
}
