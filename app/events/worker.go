package events

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/internal/signing"
	"github.com/agentd/agentd/storage/hookstore"
)

// Sender posts one webhook request. internal/safehttp's Client is the
// production one: server-side request forgery rules, no redirects, the
// response body cut to MaxResponse bytes.
type Sender interface {
	Post(ctx context.Context, url string, header map[string]string, body []byte) (status int, respBody []byte, err error)
}

// Backoff is the retry schedule after each failed attempt: 5 s, 30 s,
// 2 min, 10 min, 30 min, 1 h, then every 3 h, about a day in all (14
// attempts), each with ±20 % jitter. After the last, the delivery fails.
var Backoff = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 3 * time.Hour, 3 * time.Hour, 3 * time.Hour, 3 * time.Hour, 3 * time.Hour, 3 * time.Hour, 3 * time.Hour}

// MaxResponse is how much of a receiver's answer is kept.
const MaxResponse = 1024

// WorkerConfig configures the delivery worker; zero fields take defaults.
type WorkerConfig struct {
	DB          Deps
	Sender      Sender
	Log         *slog.Logger
	Concurrency int             // requests in flight per process; default 64
	PerEndpoint int             // in flight per endpoint across processes; default 32
	PerOrg      int             // in flight per organization across processes; default Concurrency/4, at least 4
	Timeout     time.Duration   // per request; default 10 s
	Lease       time.Duration   // claim lease; default Timeout + 20 s, never less than Timeout + 1 s
	Poll        time.Duration   // look for other processes' events; default 1 s
	Drain       time.Duration   // on stop, time in-flight requests get; default 2 s
	Schedule    []time.Duration // retry delays; default Backoff
	Jitter      float64         // ± fraction of each delay; default 0.2
	// DisableAfter: an endpoint failing every attempt for this long is
	// disabled; default 24 h.
	DisableAfter time.Duration
	// Retention: events (and their finished deliveries) older than this are
	// pruned; default 30 days.
	Retention time.Duration
}

// Worker fans events out to endpoints and delivers them: at least once, a
// resource's events in order, retried on the schedule, claims in the
// database so processes share the work and a killed one's resumes.
type Worker struct {
	cfg      WorkerConfig
	id       string
	wake     chan struct{}
	inflight atomic.Int64
	settle   settler // the loop's only: quick looks after new events (see settleSteps)
}

// NewWorker applies the defaults.
func NewWorker(cfg WorkerConfig) *Worker {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 64
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = 32
	}
	if cfg.PerOrg <= 0 {
		cfg.PerOrg = max(cfg.Concurrency/4, 4)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = cfg.Timeout + 20*time.Second
	}
	// A request may never outlive its claim: another process could take it.
	cfg.Lease = max(cfg.Lease, cfg.Timeout+time.Second)
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 2 * time.Second
	}
	if cfg.Schedule == nil {
		cfg.Schedule = Backoff
	}
	if cfg.Jitter == 0 {
		cfg.Jitter = 0.2
	}
	if cfg.DisableAfter == 0 {
		cfg.DisableAfter = 24 * time.Hour
	}
	if cfg.Retention == 0 {
		cfg.Retention = 30 * 24 * time.Hour
	}
	return &Worker{cfg: cfg, id: "wh-" + uuid.NewString()[:8], wake: make(chan struct{}, 1), settle: newSettler()}
}

// Wake makes the worker look for work now.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then gives in-flight requests Drain to
// finish, records what came back and releases the rest.
func (w *Worker) Run(ctx context.Context) error {
	sendCtx, stopSends := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSends()
	results := make(chan hookstore.DeliveryResult, w.cfg.Concurrency)
	flushed := make(chan struct{})
	go w.record(results, flushed)
	var sends sync.WaitGroup
	var lastPrune time.Time
	for ctx.Err() == nil {
		// Taken before the reads below, so a commit in between is not missed.
		events, deliveries := w.cfg.DB.Events.EventsCommitted(), wake(w.cfg.DB.NewDeliveries)
		anyEvents := wake(w.cfg.DB.NewEvents)
		if _, err := w.cfg.DB.Webhooks.FanOutEvents(ctx); err != nil && ctx.Err() == nil {
			w.cfg.Log.Warn("webhook fan-out", "err", err)
		}
		if time.Since(lastPrune) > time.Hour && w.cfg.Retention > 0 {
			lastPrune = time.Now()
			if _, err := w.cfg.DB.Events.PruneEvents(ctx, lastPrune.Add(-w.cfg.Retention), 10000); err != nil && ctx.Err() == nil {
				w.cfg.Log.Warn("pruning events", "err", err)
			}
		}
		claimed := 0
		// Claim in batches: a claim costs a scan, whether it takes one
		// delivery or sixty.
		inflight := int(w.inflight.Load())
		if free := w.cfg.Concurrency - inflight; free > 0 && (inflight == 0 || free >= w.cfg.Concurrency/4) {
			now := time.Now()
			jobs, err := w.cfg.DB.Webhooks.ClaimDeliveries(ctx, hookstore.DeliveryClaim{Token: uuid.NewString(), WorkerID: w.id,
				Now: now, LeaseUntil: now.Add(w.cfg.Lease), Limit: free, PerEndpoint: w.cfg.PerEndpoint, PerOrg: w.cfg.PerOrg})
			if err != nil && ctx.Err() == nil {
				w.cfg.Log.Warn("claiming webhook deliveries", "err", err)
			}
			claimed = len(jobs)
			w.inflight.Add(int64(len(jobs)))
			for _, j := range jobs {
				sends.Go(func() { results <- w.send(sendCtx, j) })
			}
		}
		if claimed > 0 && int(w.inflight.Load()) <= w.cfg.Concurrency*3/4 {
			continue // there may be more due right now
		}
		w.sleep(ctx, events, deliveries, anyEvents)
	}
	done := make(chan struct{})
	go func() { sends.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.cfg.Drain):
		stopSends()
		<-done
	}
	close(results)
	<-flushed
	return nil
}

// remoteEvery is how often at most another process's events wake the
// worker: that process fans them out itself, unless it runs no worker (the
// CLI), so looking a little later costs nothing, and a busy cluster's
// notifications do not each cost every worker its reads.
const remoteEvery = 200 * time.Millisecond

// localEvery is how often at most this process's own events wake it.
const localEvery = 25 * time.Millisecond

// sleep waits for a wake-up: new events of this process, deliveries queued
// or set for a retry by any process (PostgreSQL, while the listener is up),
// other processes' events (anyEvents, see remoteEvery), a recorded result,
// the next due retry, or the poll interval (a safety net only while
// notifications come from every process: see storage.Stores.IdlePoll).
func (w *Worker) sleep(ctx context.Context, events, deliveries, anyEvents <-chan struct{}) {
	d := w.cfg.DB.idlePoll(w.cfg.Poll)
	d = w.settle.wait(d, d > w.cfg.Poll)
	if next, ok, err := w.cfg.DB.Webhooks.NextDeliveryDue(ctx); err == nil && ok {
		d = min(d, max(time.Until(next), time.Millisecond))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-events:
		// A burst of this process's events (a dialling campaign writes
		// several a call) is looked at once: each look is three reads.
		w.settle.woke()
		w.linger(ctx, localEvery, nil, deliveries)
	case <-deliveries:
	case <-t.C:
	case <-anyEvents:
		w.settle.woke()
		w.linger(ctx, remoteEvery, events, deliveries)
	}
}

// linger waits d after an events wake-up, so the events logged meanwhile
// are looked at together, unless something that wants a look at once
// comes first (a nil channel never does).
func (w *Worker) linger(ctx context.Context, d time.Duration, events, deliveries <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-events:
	case <-deliveries:
	case <-t.C:
	}
}

// record writes results in batches (one transaction each) and wakes the
// loop: a recorded success may unblock the next event of the same subject.
func (w *Worker) record(results <-chan hookstore.DeliveryResult, flushed chan<- struct{}) {
	defer close(flushed)
	off := hookstore.EndpointFailure{After: w.cfg.DisableAfter, Reason: func(last string) string {
		return fmt.Sprintf("every delivery failed for %s (last error: %s)", w.cfg.DisableAfter, last)
	}}
	batch := make([]hookstore.DeliveryResult, 0, 256)
	for r := range results {
		batch = append(batch[:0], r)
	more:
		for len(batch) < cap(batch) {
			select {
			case r, ok := <-results:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		disabled, err := w.cfg.DB.Webhooks.FinishDeliveries(ctx, batch, time.Now(), off)
		cancel()
		if err != nil {
			w.cfg.Log.Error("recording webhook deliveries", "err", err, "deliveries", len(batch))
		}
		for _, id := range disabled {
			w.cfg.Log.Warn("webhook disabled: every delivery failed", "webhook", id, "for", w.cfg.DisableAfter)
		}
		w.inflight.Add(-int64(len(batch)))
		w.Wake()
	}
}

// send makes one attempt of a claimed delivery.
func (w *Worker) send(ctx context.Context, j hookstore.DeliveryJob) hookstore.DeliveryResult {
	res := hookstore.DeliveryResult{ID: j.ID, Token: j.Token, Attempt: j.Attempt, StartedAt: time.Now()}
	body := Body(j.Event)
	secrets := []string{j.Secret}
	if j.PrevSecret != "" && j.PrevSecretUntil != nil && res.StartedAt.Before(*j.PrevSecretUntil) {
		secrets = append(secrets, j.PrevSecret)
	}
	header := map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        "agentd-webhooks/1",
		"webhook-id":        j.Event.ID,
		"webhook-timestamp": strconv.FormatInt(res.StartedAt.Unix(), 10),
		"webhook-signature": signing.Sign(j.Event.ID, res.StartedAt, body, secrets...),
	}
	rctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	code, resp, err := w.cfg.Sender.Post(rctx, j.URL, header, body)
	timedOut := rctx.Err() == context.DeadlineExceeded
	cancel()
	res.Duration = time.Since(res.StartedAt)
	if ctx.Err() != nil {
		res.Release = true // stopping: not this attempt's fault
		return res
	}
	res.Code, res.Body = code, string(resp[:min(len(resp), MaxResponse)])
	switch {
	case err != nil && timedOut:
		res.Error = fmt.Sprintf("timed out after %s", w.cfg.Timeout)
	case err != nil:
		res.Error = err.Error()
	case code < 200 || code > 299:
		res.Error = "HTTP " + strconv.Itoa(code)
	default:
		res.OK = true
		return res
	}
	if !j.Replay && j.Attempt <= len(w.cfg.Schedule) {
		d := w.cfg.Schedule[j.Attempt-1]
		d += time.Duration((rand.Float64()*2 - 1) * w.cfg.Jitter * float64(d))
		at := time.Now().Add(d)
		res.RetryAt = &at
	}
	return res
}
