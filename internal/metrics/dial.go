package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentd/agentd/embed"
)

// Queue is the dial queue's observer (dial.QueueObserver) feeding the
// registry's dial metrics.
type Queue struct{ r *Registry }

// Outcomes are the outcomes a dial can end with (dial.QueueObserver).
var Outcomes = []string{"completed", "busy", "no_answer", "failed", "cancelled", "retry_later"}

// Queue returns the observer to set as dial.QueueConfig.Observer of a
// queue dialling with dialer; its series start at 0 rather than appear
// with the first call, so rates and alerts see them from the start.
func (r *Registry) Queue(dialer string) Queue {
	r.dials.WithLabelValues(dialer)
	for _, o := range Outcomes {
		r.outcomes.WithLabelValues(dialer, o)
	}
	return Queue{r}
}

// QueueStarted records the CPS budget and the concurrency cap.
func (q Queue) QueueStarted(cps float64, maxConcurrent int) {
	q.r.cpsLimit.Set(cps)
	q.r.concurrency.Set(float64(maxConcurrent))
}

// DialStarted counts a dial.
func (q Queue) DialStarted(dialer string) {
	q.r.dials.WithLabelValues(dialer).Inc()
	q.r.dialing.Inc()
}

// DialEnded counts an outcome.
func (q Queue) DialEnded(dialer, outcome string) {
	q.r.outcomes.WithLabelValues(dialer, outcome).Inc()
	q.r.dialing.Dec()
}

// Paced adds a wait for the token bucket.
func (q Queue) Paced(wait time.Duration) { q.r.pacing.Add(wait.Seconds()) }

// Embedder wraps e so that every Embed call is timed and counted under
// e's name. The wrapper is otherwise e.
func (r *Registry) Embedder(e embed.Embedder) embed.Embedder {
	n := e.Name()
	return &timedEmbedder{Embedder: e,
		dur: r.embedDur.WithLabelValues(n), texts: r.embedTexts.WithLabelValues(n), errs: r.embedErrs.WithLabelValues(n)}
}

type timedEmbedder struct {
	embed.Embedder
	dur   prometheus.Observer
	texts prometheus.Counter
	errs  prometheus.Counter
}

func (t *timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	v, err := t.Embedder.Embed(ctx, texts)
	t.dur.Observe(time.Since(start).Seconds())
	if err != nil {
		t.errs.Inc()
	} else {
		t.texts.Add(float64(len(texts)))
	}
	return v, err
}
