// Package metrics is agentd's Prometheus registry: HTTP requests by route
// pattern, rate-limit refusals, the dial queue, knowledge processing,
// embedding latency, database pools and the Go runtime. Label values are
// always from small fixed sets (route patterns, methods, statuses, dialer
// and embedder names), never ids or raw paths, so the number of series
// stays bounded whatever the traffic.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every agentd metric; one per server.
type Registry struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // method, route, status
	duration    *prometheus.HistogramVec // method, route
	rateLimited *prometheus.CounterVec   // route
	unmatched   map[string]*Route        // by method

	dials       *prometheus.CounterVec // dialer
	outcomes    *prometheus.CounterVec // dialer, outcome
	dialing     prometheus.Gauge
	cpsLimit    prometheus.Gauge
	concurrency prometheus.Gauge
	pacing      prometheus.Counter

	embedDur   *prometheus.HistogramVec // embedder
	embedTexts *prometheus.CounterVec   // embedder
	embedErrs  *prometheus.CounterVec   // embedder

	// Webhook deliveries (app/events) belong here once webhooks exist:
	// agentd_webhook_deliveries_total{outcome} (delivered, failed,
	// retried, dropped), agentd_webhook_delivery_duration_seconds, and the
	// lag agentd_webhook_oldest_pending_seconds read from storage at scrape
	// time by the store collector, like the dial queue depth. Labels must
	// stay free of endpoint URLs and ids.
}

// Unmatched is the route label of a request no route matched (404, 405,
// and CORS preflights, which are answered before routing).
const Unmatched = "unmatched"

// New makes a registry with the Go runtime and process collectors.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { r.reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	r.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentd_http_requests_total",
		Help: "HTTP requests answered, by method, route pattern and status code.",
	}, []string{"method", "route", "status"})
	r.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agentd_http_request_duration_seconds",
		Help:    "Time from the request's arrival to the end of its handler, by method and route pattern.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	r.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentd_http_rate_limited_total",
		Help: "Requests refused by the per-key rate limit (429, or 401 on /api/v2), by route pattern.",
	}, []string{"route"})
	f(r.requests)
	f(r.duration)
	f(r.rateLimited)
	r.unmatched = map[string]*Route{}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"} {
		r.unmatched[m] = r.Route(m, Unmatched)
	}

	r.dials = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentd_dials_total",
		Help: "Call attempts this process started dialling, by dialer.",
	}, []string{"dialer"})
	r.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentd_dial_outcomes_total",
		Help: "How the attempts this process dialled ended: completed, busy, no_answer, failed, cancelled, retry_later.",
	}, []string{"dialer", "outcome"})
	r.dialing = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agentd_dials_in_progress",
		Help: "Attempts this process is dialling or talking on now.",
	})
	r.cpsLimit = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agentd_dial_cps_limit",
		Help: "Calls started per second allowed by --dial-cps (the CPS budget).",
	})
	r.concurrency = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agentd_dial_max_concurrent",
		Help: "Attempts this process may dial at once (--max-concurrent-calls).",
	})
	r.pacing = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentd_dial_pacing_wait_seconds_total",
		Help: "Time the dial queue waited for the CPS token bucket; near 1 s per second means the budget is the bottleneck.",
	})
	f(r.dials)
	f(r.outcomes)
	f(r.dialing)
	f(r.cpsLimit)
	f(r.concurrency)
	f(r.pacing)

	r.embedDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agentd_embed_request_duration_seconds",
		Help:    "Time of one Embed call (one batch of texts), by embedder.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"embedder"})
	r.embedTexts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentd_embed_texts_total",
		Help: "Texts embedded, by embedder.",
	}, []string{"embedder"})
	r.embedErrs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentd_embed_errors_total",
		Help: "Embed calls that failed (after the embedder's own retries), by embedder.",
	}, []string{"embedder"})
	f(r.embedDur)
	f(r.embedTexts)
	f(r.embedErrs)
	return r
}

// Register adds a collector (the store collector, later webhooks).
func (r *Registry) Register(c prometheus.Collector) error { return r.reg.Register(c) }

// Handler serves the registry in the Prometheus text format. A collector
// that fails (the database is busy) drops its own series from that scrape
// and the rest is still served.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Route is the request metrics of one entry of the route table, made once
// at start so that a request costs no label hashing for its histogram.
type Route struct {
	method, pattern string
	requests        *prometheus.CounterVec
	dur             prometheus.Observer
	limited         prometheus.Counter
	byStatus        sync.Map // int -> prometheus.Counter
}

// Route returns the metrics of the route method+pattern (the route
// table's path, e.g. /api/v1/calls/:id).
func (r *Registry) Route(method, pattern string) *Route {
	return &Route{
		method: method, pattern: pattern, requests: r.requests,
		dur:     r.duration.WithLabelValues(method, pattern),
		limited: r.rateLimited.WithLabelValues(pattern),
	}
}

// UnmatchedRoute is the Route of a request no route matched; unusual
// methods share one label so that clients cannot make new series.
func (r *Registry) UnmatchedRoute(method string) *Route {
	if rt, ok := r.unmatched[method]; ok {
		return rt
	}
	return r.unmatched["other"]
}

// Observe records one answered request.
func (rt *Route) Observe(status int, d time.Duration) {
	rt.dur.Observe(d.Seconds())
	if c, ok := rt.byStatus.Load(status); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	c := rt.requests.WithLabelValues(rt.method, rt.pattern, strconv.Itoa(status))
	rt.byStatus.Store(status, c)
	c.Inc()
}

// RateLimited records one request refused by the rate limit.
func (rt *Route) RateLimited() { rt.limited.Inc() }
