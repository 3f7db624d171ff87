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
	"github.com/agentd/agentd/embed"
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
	// Deadline bounds one analysis (transcript, model, validation); one
	// that runs past it is retried later like a model outage. 0: 3 minutes.
	Deadline time.Duration
	// ContextTokens is the model's context budget the transcript is
	// trimmed to; 0: DefaultContextTokens.
	ContextTokens int
}

// MaxAttempts bounds how often one analysis is claimed (a retry after an
// outage, a deadline, or a process killed while it ran): then it fails,
// saying so, and is never claimed again.
const MaxAttempts = 20

// stopGrace is how long Run waits, once its context ends, for analyses in
// flight to notice; then it returns anyway (their leases run out).
const stopGrace = time.Second

// Service is post-call analysis.
type Service struct {
	d     Deps
	cfg   Config
	owner string
	wake  chan struct{}
	count func(string) int // cl100k tokens, for trimming transcripts
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
	if cfg.Deadline <= 0 {
		cfg.Deadline = 3 * time.Minute
	}
	if cfg.ContextTokens <= 0 {
		cfg.ContextTokens = DefaultContextTokens
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	count := func(s string) int { return len(s)/3 + 1 } // never used: the tokenizer is embedded
	if c, err := embed.NewChunker(embed.DefaultChunkTokens, 0); err == nil {
		count = c.CountTokens
	}
	return &Service{d: d, cfg: cfg, owner: "analysis-" + uuid.NewString(), wake: make(chan struct{}, 1), count: count}
}

// Wake makes an idle worker look at the queue now.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run works the queue until ctx ends. Each analysis runs on its own, under
// its own deadline: a free slot is filled as soon as one ends, so a slow
// analysis holds back nothing but its slot. At shutdown the analyses in
// flight are abandoned with their lease (taken again once it runs out),
// and Run returns within stopGrace whatever they are doing.
func (s *Service) Run(ctx context.Context) error {
	slots := make(chan struct{}, s.cfg.Concurrency)
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for ctx.Err() == nil {
		queued := wakeup.Next(s.d.Queued) // before the claim reads; nil: never
		wait := wakeup.IdlePoll(s.d.Queued, s.cfg.Poll)
		free := cap(slots) - len(slots)
		var jobs []analysisstore.Job
		if free > 0 {
			var err error
			jobs, err = s.d.Store.Claim(ctx, s.owner, s.cfg.Lease, free)
			if err != nil && ctx.Err() == nil {
				s.d.Log.Warn("analysis queue", "err", err)
			}
		}
		for _, j := range jobs {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() {
					<-slots
					wg.Done()
					select {
					case freed <- struct{}{}:
					default:
					}
				}()
				s.runOne(ctx, j)
			}()
		}
		if len(jobs) > 0 && len(jobs) == free {
			continue // maybe more due, and slots may have freed meanwhile
		}
		if free == 0 {
			queued, wait = nil, time.Hour // full: only a free slot matters
		} else if next, err := s.d.Store.NextDue(ctx); err == nil && !next.IsZero() {
			wait = min(max(time.Until(next), 0), wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-queued:
		case <-freed:
		case <-t.C:
		}
		t.Stop()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGrace):
		s.d.Log.Warn("analysis: stopped with analyses still in flight; their leases run out")
	}
	return nil
}

// RunOnce claims the analyses due now (up to the concurrency) and runs
// them to their end; n is how many it took. For tests and tools: Run
// never waits for a batch.
func (s *Service) RunOnce(ctx context.Context) (int, error) {
	jobs, err := s.d.Store.Claim(ctx, s.owner, s.cfg.Lease, s.cfg.Concurrency)
	if err != nil || len(jobs) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); s.runOne(ctx, j) }()
	}
	wg.Wait()
	return len(jobs), nil
}

// runOne runs one claimed analysis under its own deadline, renewing its
// lease meanwhile, and stores the outcome: a result, or a retry later.
func (s *Service) runOne(ctx context.Context, j analysisstore.Job) {
	ictx, cancel := context.WithTimeout(ctx, s.cfg.Deadline)
	defer cancel()
	go func() { // the lease outlives a slow model, not the process
		t := time.NewTicker(s.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ictx.Done():
				return
			case <-t.C:
				if err := s.d.Store.Renew(ictx, []analysisstore.Job{j}, s.owner, s.cfg.Lease); err != nil && ictx.Err() == nil {
					s.d.Log.Warn("analysis lease", "err", err)
				}
			}
		}
	}()
	status, res, err := s.run(ictx, j)
	if ctx.Err() != nil {
		return // shutdown: the lease runs out and the row is taken again
	}
	if err == nil {
		err = s.finish(ctx, j, status, res)
	} else {
		if ictx.Err() != nil {
			err = fmt.Errorf("the analysis ran past its deadline of %s: %w", s.cfg.Deadline, err)
		}
		err = s.retry(ctx, j, err)
	}
	if err != nil && ctx.Err() == nil {
		s.d.Log.Warn("analysis", "kind", j.Kind, "id", j.SubjectID, "org", j.OrgID, "err", err)
	}
}

// retry leaves the row pending, due after a backoff that doubles with its
// attempts; after MaxAttempts it fails instead.
func (s *Service) retry(ctx context.Context, j analysisstore.Job, cause error) error {
	if j.Attempts >= MaxAttempts {
		return s.finish(ctx, j, analysisstore.StatusFailed, Result{Model: s.modelName(),
			Error: fmt.Sprintf("gave up after %d attempts (max %d): %s", j.Attempts, MaxAttempts, oneLine(cause))})
	}
	wait := s.cfg.RetryBase << min(max(j.Attempts-1, 0), 20)
	if wait > s.cfg.RetryMax || wait <= 0 {
		wait = s.cfg.RetryMax
	}
	if err := s.d.Store.Retry(ctx, j, s.owner, time.Now().Add(wait)); err != nil {
		return err
	}
	return fmt.Errorf("%w (retry in %s)", cause, wait)
}

func (s *Service) modelName() string {
	if s.cfg.Model == nil {
		return ""
	}
	return s.cfg.Model.Name()
}

// run analyses one claimed subject: the final status and result, or an
// error when it should be tried again (the model down or too slow).
func (s *Service) run(ctx context.Context, j analysisstore.Job) (string, Result, error) {
	if j.Attempts > MaxAttempts { // claimed again and again: a process died while it ran
		return analysisstore.StatusFailed, Result{Model: s.modelName(),
			Error: fmt.Sprintf("gave up after %d attempts (max %d): the analysis never finished", j.Attempts-1, MaxAttempts)}, nil
	}
	if j.Plan == nil {
		return analysisstore.StatusSkipped, Result{Error: "the agent has no analysis plan any more"}, nil
	}
	p, err := ParsePlan(j.Plan)
	if err != nil {
		return analysisstore.StatusFailed, Result{Error: "the agent's analysis plan is invalid: " + err.Error()}, nil
	}
	if s.cfg.Model == nil {
		return analysisstore.StatusSkipped, Result{Error: "no generative model configured (--llm builtin): analysis needs --llm openai"}, nil
	}
	turns, err := s.transcript(ctx, j)
	if err != nil {
		return "", Result{}, err
	}
	if len(turns) == 0 {
		return analysisstore.StatusSkipped, Result{Error: "the transcript is empty"}, nil
	}
	instr := instructions(p)
	budget := s.cfg.ContextTokens - min(1024, s.cfg.ContextTokens/4) - s.count(instr) - 8
	text, trimmed := fitTranscript(s.count, budget, turns)
	if trimmed {
		s.d.Log.Info("analysis: transcript trimmed to the model's context", "kind", j.Kind, "id", j.SubjectID, "messages", len(turns))
	}
	res, ok, err := analyze(ctx, s.cfg.Model, p, text)
	if err != nil {
		return "", Result{}, fmt.Errorf("model: %w", err)
	}
	if !ok {
		return analysisstore.StatusFailed, res, nil
	}
	return analysisstore.StatusCompleted, res, nil
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
