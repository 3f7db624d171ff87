package dial

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// QueueConfig configures a dial queue.
type QueueConfig struct {
	DB     Deps // the calls store and its wake-ups
	Dialer Dialer
	Clock  Clock        // nil: RealClock
	Log    *slog.Logger // nil: discard

	CPS           float64       // calls started per second on the trunk, by all processes together; default 1
	MaxConcurrent int           // outbound calls up at once, by all processes together; default 10
	Lease         time.Duration // claim lease, renewed while dialling; default 30 s; negative disables leases and recovery
	Heartbeat     time.Duration // lease renewal and cancel check; default min(2 s, Lease/5)
	Poll          time.Duration // longest idle wait (calls queued by other processes); default 1 s
	RetryLater    time.Duration // delay after a dialer's ErrRetryLater; default 5 s
	Drain         time.Duration // on shutdown, how long dialling calls may finish; default 5 s

	// OnRetry is called after an attempt was sent back to scheduled (so the
	// scheduler can wake for its due time).
	OnRetry func()
	// HoursTTL is how long an organization's calling hours are cached for
	// the checks at dial time; default 5 s.
	HoursTTL time.Duration
	// Observer, when set, is told of dials, outcomes and pacing (metrics).
	Observer QueueObserver
}

// Queue is the outbound dial queue. It claims due queued calls from the
// database one at a time (priority 0 first, then due time), paced at CPS
// and capped at MaxConcurrent by the trunk's budget in the database, and
// dials each on its own goroutine. Claims are atomic in the database (see
// storage.ClaimCall), so several queues on one database never dial the
// same attempt, and they share one pace and one cap.
type Queue struct {
	cfg      QueueConfig
	db       Deps
	clk      Clock
	log      *slog.Logger
	worker   string
	interval time.Duration

	wake chan struct{}
	sem  chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	active map[string]*activeCall // by call id
	seq    uint64                 // claims entered in active so far

	// claimMu makes a claim and its entry in active one step for Cancel:
	// a call cancelled in the database after its claim is found in active.
	claimMu sync.Mutex
	pacer   pacer
	hours   hoursCache

	unavailableLogged atomic.Int64 // the second a progress failed for the database's absence was last logged
}

type activeCall struct {
	token  string
	cancel context.CancelCauseFunc
	seq    uint64 // order of its claim, against a lease renewal's answer
}

// Causes of a hang-up by the queue.
var (
	errUserCancel = errors.New("call cancelled")
	errLost       = errors.New("claim lost (cancelled or settled elsewhere)")
	errShutdown   = errors.New("server shutting down")
)

// ReasonInterrupted is the failure reason of an attempt cut off by a server
// stop or crash.
const ReasonInterrupted = "interrupted"

// NewQueue makes a queue; Run starts it.
func NewQueue(cfg QueueConfig) *Queue {
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.CPS <= 0 {
		cfg.CPS = 1
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 10
	}
	if cfg.Lease == 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = min(2*time.Second, cfg.Lease/5)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.RetryLater <= 0 {
		cfg.RetryLater = 5 * time.Second
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 5 * time.Second
	}
	if cfg.HoursTTL <= 0 {
		cfg.HoursTTL = 5 * time.Second
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	cfg.Observer.QueueStarted(cfg.CPS, cfg.MaxConcurrent)
	return &Queue{
		cfg: cfg, db: cfg.DB, clk: cfg.Clock, log: cfg.Log,
		worker:   uuid.NewString(),
		interval: time.Duration(float64(time.Second) / cfg.CPS),
		wake:     make(chan struct{}, 1),
		sem:      make(chan struct{}, cfg.MaxConcurrent),
		active:   map[string]*activeCall{},
		pacer:    pacer{log: cfg.Log},
		hours:    hoursCache{calls: cfg.DB.Calls, ttl: cfg.HoursTTL, m: map[string]hoursEntry{}},
	}
}

// Wake tells the queue that calls may have become due (the dial event).
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Cancel hangs up the call if this queue is dialling it. The caller has
// already marked it cancelled in the database; the attempt is recorded when
// the dialer returns.
func (q *Queue) Cancel(callID string) bool {
	q.claimMu.Lock()
	defer q.claimMu.Unlock()
	q.mu.Lock()
	ac := q.active[callID]
	q.mu.Unlock()
	if ac == nil {
		return false
	}
	ac.cancel(errUserCancel)
	return true
}

// Active is the number of attempts being dialled.
func (q *Queue) Active() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.active)
}

// Run claims and dials calls until ctx ends, then lets dialling calls finish
// for up to Drain, hangs up the rest (settled as failed, reason
// interrupted, retried if the call's policy allows) and returns.
func (q *Queue) Run(ctx context.Context) error {
	hbCtx, stopHB := context.WithCancel(context.WithoutCancel(ctx))
	hbDone := make(chan struct{})
	if q.cfg.Lease > 0 {
		q.recoverExpired(ctx)
		go func() {
			defer close(hbDone)
			q.heartbeatLoop(hbCtx)
		}()
	} else {
		close(hbDone)
	}
	q.claimLoop(ctx)

	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	t := q.clk.NewTimer(q.cfg.Drain)
	select {
	case <-done:
		t.Stop()
	case <-t.C():
		q.mu.Lock()
		for _, ac := range q.active {
			ac.cancel(errShutdown)
		}
		q.mu.Unlock()
		<-done
	}
	stopHB()
	<-hbDone
	return nil
}

func (q *Queue) claimLoop(ctx context.Context) {
	for {
		select {
		case q.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		now := q.clk.Now()
		q.claimMu.Lock()
		r, err := q.db.Calls.ClaimCall(ctx, callstore.Claim{
			Token: uuid.NewString(), WorkerID: q.worker, Dialer: q.cfg.Dialer.Name(),
			Now: now, LeaseUntil: now.Add(q.leaseFor()), Budget: q.budget(now), Clock: q.clk.Now,
		})
		if err != nil || !r.OK {
			q.claimMu.Unlock()
			<-q.sem
			if ctx.Err() != nil {
				return
			}
			switch {
			case err != nil:
				q.log.Error("dial queue: claim", "err", err)
				q.idle(ctx)
			case r.Wait > 0:
				// The trunk's next slot is taken (by this process or another).
				q.cfg.Observer.Paced(r.Wait)
				if sleep(ctx, q.clk, r.Wait) != nil {
					return
				}
			case r.Full:
				q.idleFor(ctx, min(q.cfg.Poll, 50*time.Millisecond))
			default:
				q.idle(ctx)
			}
			continue
		}
		c := r.Call
		if q.admit(ctx, c, now, r.Slot) != nil {
			// Not dialled (do-not-call, calling hours): its slot was given back.
			q.claimMu.Unlock()
			<-q.sem
			continue
		}
		q.wg.Add(1)
		dctx, cancel := context.WithCancelCause(context.Background())
		q.mu.Lock()
		q.seq++
		q.active[c.ID] = &activeCall{token: c.ClaimToken, cancel: cancel, seq: q.seq}
		q.mu.Unlock()
		q.claimMu.Unlock()
		go q.dial(dctx, cancel, c, r.Slot)
	}
}

// leaseFor is the lease a claim starts with; without leases (benchmarks) a
// long one so nothing is ever recovered.
func (q *Queue) leaseFor() time.Duration {
	if q.cfg.Lease < 0 {
		return 24 * time.Hour
	}
	return q.cfg.Lease
}

// Slowdown is how many times slower than configured the queue dials now
// (1 normally; more for a while after carrier pushback), for logs and metrics.
func (q *Queue) Slowdown() int { return q.pacer.slowdown(q.clk.Now()) }

// idle runs after a claim found nothing: it waits for a wake-up (Wake, or
// calls queued by any process: the calls channel), the next queued call's
// due time, or the poll, and returns once a read shows a queued call due,
// so an idle queue claims (a write) only when there is something to take.
func (q *Queue) idle(ctx context.Context) {
	for first := true; ctx.Err() == nil; first = false {
		woke := q.db.wake() // before the read: a commit in between is not missed
		d := q.db.idlePoll(q.cfg.Poll)
		next, ok, err := q.db.Calls.NextDue(ctx, callstore.CallQueued)
		switch {
		case err != nil:
			if !first {
				return // let the claim report it
			}
			d = q.cfg.Poll
		case !ok:
		case next.After(q.clk.Now()):
			d = min(d, max(next.Sub(q.clk.Now()), 10*time.Millisecond))
		case !first:
			return
		default:
			// Due but not claimable: its agent is at its own cap (a settle
			// wakes the queue). Look again soon, not in a tight loop.
			d = min(d, 100*time.Millisecond)
		}
		q.wait(ctx, d, woke)
	}
}

// idleFor waits for a wake-up or d.
func (q *Queue) idleFor(ctx context.Context, d time.Duration) { q.wait(ctx, d, nil) }

// wait waits for Wake, woke (nil: none) or d.
func (q *Queue) wait(ctx context.Context, d time.Duration, woke <-chan struct{}) {
	t := q.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-q.wake:
	case <-woke:
	case <-t.C():
	}
}

// dial places one attempt and settles it.
// pauseCheckAhead is how long before its slot a call claimed ahead checks
// whether its batch was paused meanwhile.
const pauseCheckAhead = 20 * time.Millisecond

func (q *Queue) dial(ctx context.Context, cancel context.CancelCauseFunc, c callstore.Call, slot callstore.Slot) {
	defer func() {
		q.mu.Lock()
		delete(q.active, c.ID)
		q.mu.Unlock()
		cancel(nil)
		<-q.sem
		q.wg.Done()
	}()
	call := Call{
		ID: c.ID, Attempt: c.Attempts, OrgID: c.OrgID, AgentID: c.AgentID, AgentName: c.AgentName,
		Instructions: c.AgentInstructions, PhoneNumber: c.PhoneNumber, CallerID: c.CallerID,
		Metadata: dialMetadata(c),
	}
	if wait := slot.Start.Sub(q.clk.Now()); wait > 0 {
		// Claimed ahead of its slot: its batch may have been paused since.
		// That is read a little before the slot, so the read's own time
		// (long on a busy database) does not make the dial late and the
		// next one crowd it.
		early := min(wait, pauseCheckAhead)
		if sleep(ctx, q.clk, wait-early) == nil && q.pausedMeanwhile(c, slot) {
			return
		}
		if wait := slot.Start.Sub(q.clk.Now()); wait > 0 {
			_ = sleep(ctx, q.clk, wait)
		}
	}
	if context.Cause(ctx) != nil {
		// Cancelled between its claim and now (a batch cancel): never dialled.
		q.settle(c, Result{Status: StatusCancelled}, nil, context.Cause(ctx))
		return
	}
	q.cfg.Observer.DialStarted(q.cfg.Dialer.Name())
	bg := context.WithoutCancel(ctx)
	progress := func(p Progress) {
		at := p.At
		if at.IsZero() {
			at = q.clk.Now()
		}
		live, err := q.db.Calls.RecordProgress(bg, c.ID, c.ClaimToken, callstore.Progress{Status: p.Status, RoomID: p.RoomID,
			JobID: p.JobID, SIPParticipantID: p.SIPParticipantID, At: at})
		if err != nil {
			// Progress is best effort (the settle is retried); while the
			// database is away, every live call's fails alike: one line a second.
			sec, last := time.Now().Unix(), q.unavailableLogged.Load()
			if !sqldb.Unavailable(err) || sec != last && q.unavailableLogged.CompareAndSwap(last, sec) {
				q.log.Error("dial queue: progress", "call", c.ID, "err", err)
			}
			return
		}
		if !live {
			cancel(errLost)
		}
	}
	res, err := q.cfg.Dialer.Dial(ctx, call, progress)
	q.settle(c, res, err, context.Cause(ctx))
}

// dialMetadata is what the dialer passes on to the voice agent: the call's
// metadata, plus the contact's name and callMetadata when present.
func dialMetadata(c callstore.Call) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(c.Metadata, &m)
	if len(c.CallMetadata) > 0 {
		var cm map[string]any
		if json.Unmarshal(c.CallMetadata, &cm) == nil {
			m["callMetadata"] = cm
		}
	}
	if c.ContactName != "" {
		m["contactName"] = c.ContactName
	}
	return m
}

// settle records how the attempt ended and whether the call is retried.
func (q *Queue) settle(c callstore.Call, res Result, dialErr, cause error) {
	// Outlasts a database restart: an attempt whose settle is lost stays
	// claimed by this process, which keeps renewing its lease.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := q.clk.Now()
	if errors.Is(dialErr, ErrRetryLater) {
		wait := q.cfg.RetryLater
		if pb, ok := asPushback(dialErr); ok {
			q.pacer.pushback(now, pb)
			wait = max(wait, pb.RetryAfter)
		}
		q.cfg.Observer.DialEnded(q.cfg.Dialer.Name(), OutcomeRetryLater)
		if err := retryUnavailable(ctx, func() error { return q.db.Calls.RequeueAttempt(ctx, c.ID, c.ClaimToken, now.Add(wait)) }); err != nil {
			q.log.Error("dial queue: requeue", "call", c.ID, "err", err)
		}
		return
	}
	if dialErr != nil {
		res = Result{Status: StatusFailed, Reason: dialErr.Error()}
	}
	switch res.Status {
	case StatusCompleted, StatusBusy, StatusNoAnswer, StatusFailed:
	case StatusCancelled:
		if errors.Is(cause, errShutdown) {
			res.Status, res.Reason = StatusFailed, ReasonInterrupted
		}
	default:
		res = Result{Status: StatusFailed, Reason: "dialer returned no final status (" + res.Status + ")"}
	}
	if res.Status == StatusFailed && res.Reason == "" {
		res.Reason = "call failed"
	}
	q.cfg.Observer.DialEnded(q.cfg.Dialer.Name(), res.Status)
	o := callstore.Outcome{Status: res.Status, Reason: res.Reason, SIPCode: res.SIPCode, Summary: res.Summary, EndedAt: now}
	if res.Status == StatusCompleted || res.Duration > 0 {
		d := res.Duration.Round(time.Millisecond).Seconds()
		o.Duration = &d
	}
	if res.Status == StatusCompleted && q.voicemail(ctx, c) {
		o.Label = OutcomeVoicemail
		o.RetryAt = q.retryAt(c, OutcomeVoicemail, now)
	}
	if res.Status != StatusCompleted && res.Status != StatusCancelled {
		o.RetryAt = q.retryAt(c, res.Status, now)
	}
	var settled bool
	err := retryUnavailable(ctx, func() (err error) {
		settled, err = q.db.Calls.FinishAttempt(ctx, c.ID, c.ClaimToken, o)
		return err
	})
	if err != nil {
		q.log.Error("dial queue: settle", "call", c.ID, "err", err)
		return
	}
	q.log.Info("call attempt ended", "call", c.ID, "attempt", c.Attempts, "status", res.Status,
		"outcome", o.Label, "reason", res.Reason, "retry", o.RetryAt != nil && settled)
	if settled && o.RetryAt != nil && q.cfg.OnRetry != nil {
		q.cfg.OnRetry()
	}
	q.Wake() // a slot of the call's agent is free again
}

// retryUnavailable runs f until it succeeds, fails for another reason than
// the database being unreachable, or ctx ends, waiting 100 ms, doubling up
// to 2 s, between tries (real time: it waits for the database, not for the
// queue's clock).
func retryUnavailable(ctx context.Context, f func() error) error {
	wait := 100 * time.Millisecond
	for {
		err := f()
		if err == nil || !sqldb.Unavailable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// voicemail reports whether the voice agent reported voicemail for this
// attempt (a result posted since it was claimed).
func (q *Queue) voicemail(ctx context.Context, c callstore.Call) bool {
	r, err := q.db.Calls.GetCallResult(ctx, c.ID)
	return err == nil && r.Outcome != nil && *r.Outcome == OutcomeVoicemail && !r.UpdatedAt.Before(c.UpdatedAt)
}

// retryAt is when the call's next attempt goes, or nil for none: its stored
// policy must retry on the outcome with attempts left, and its window (and
// the organization's calling hours) must still open.
func (q *Queue) retryAt(c callstore.Call, status string, endedAt time.Time) *time.Time {
	at, err := RetryTime(c, status, endedAt, q.hours.get(context.Background(), c.OrgID, q.clk.Now()))
	if err != nil {
		q.log.Info("call not retried", "call", c.ID, "err", err)
		return nil
	}
	return at
}

// heartbeatLoop renews this queue's leases, hangs up calls cancelled from
// elsewhere, and settles attempts of dead workers.
func (q *Queue) heartbeatLoop(ctx context.Context) {
	for {
		if err := sleep(ctx, q.clk, q.cfg.Heartbeat); err != nil {
			return
		}
		// A claim committed after the renewal read its tokens is missing
		// from live but not lost: only calls entered before it are checked.
		q.mu.Lock()
		before, idle := q.seq, len(q.active) == 0
		q.mu.Unlock()
		if idle {
			// Nothing to renew: no write (a claim entered after this check
			// was leased for Lease, several heartbeats).
			q.recoverExpired(ctx)
			continue
		}
		live, err := q.db.Calls.RenewLeases(ctx, q.worker, q.clk.Now().Add(q.cfg.Lease))
		if err != nil {
			if ctx.Err() == nil {
				q.log.Error("dial queue: renew leases", "err", err)
			}
			continue
		}
		q.mu.Lock()
		for _, ac := range q.active {
			if !live[ac.token] && ac.seq <= before {
				ac.cancel(errLost)
			}
		}
		q.mu.Unlock()
		q.recoverExpired(ctx)
	}
}

// recoverExpired settles attempts whose lease ran out: their worker died
// mid-dial. They are never dialled again as the same attempt; they end as
// failed (interrupted) or go back to scheduled when the policy retries.
func (q *Queue) recoverExpired(ctx context.Context) {
	now := q.clk.Now()
	calls, err := q.db.Calls.ExpiredClaims(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			q.log.Error("dial queue: expired claims", "err", err)
		}
		return
	}
	for _, c := range calls {
		o := callstore.Outcome{Status: StatusFailed, Reason: ReasonInterrupted, EndedAt: now, ExpiredBefore: &now}
		o.RetryAt = q.retryAt(c, StatusFailed, now)
		settled, err := q.db.Calls.FinishAttempt(ctx, c.ID, c.ClaimToken, o)
		if err != nil {
			q.log.Error("dial queue: settle interrupted", "call", c.ID, "err", err)
			continue
		}
		q.log.Warn("call attempt interrupted", "call", c.ID, "attempt", c.Attempts, "retry", o.RetryAt != nil && settled)
		if settled && o.RetryAt != nil && q.cfg.OnRetry != nil {
			q.cfg.OnRetry()
		}
	}
}

// NotConfigured is the dialer of --dialer none: every attempt fails with
// ErrNotConfigured ("telephony service not configured").
type NotConfigured struct{}

// Name is "none".
func (NotConfigured) Name() string { return "none" }

// Dial fails at once.
func (NotConfigured) Dial(context.Context, Call, func(Progress)) (Result, error) {
	return Result{}, ErrNotConfigured
}
