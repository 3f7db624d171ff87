package metrics

import (
	"context"
	"database/sql"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Store is what the store collector reads at scrape time (app adapts the
// calls and knowledge stores to it). Reading the shared database rather
// than counting in the process makes the queue and backlog gauges true for every agentd process on
// the file.
type Store interface {
	CallsInFlight(ctx context.Context) (map[string]int, error)
	KBBacklogByStatus(ctx context.Context) (map[string]int, error)
	PoolStats() map[string]sql.DBStats
}

// The states reported, so a state with no call reads 0 instead of
// disappearing.
var (
	callStates = []string{"initiated", "scheduled", "queued", "connecting", "ringing", "active"}
	kbStates   = []string{"pending", "processing"}
)

// scrapeTimeout bounds the store's queries in one scrape.
const scrapeTimeout = 5 * time.Second

// CollectStore registers the collector of the dial queue depth, the
// knowledge backlog and the database pool statistics.
func (r *Registry) CollectStore(s Store) error { return r.reg.Register(newStoreCollector(s)) }

type storeCollector struct {
	s                          Store
	calls, kb                  *prometheus.Desc
	open, inUse, idle, maxOpen *prometheus.Desc
	waits, waited, closedIdle  *prometheus.Desc
}

func newStoreCollector(s Store) *storeCollector {
	pool := []string{"pool"}
	return &storeCollector{s: s,
		calls:      prometheus.NewDesc("agentd_calls", "Calls not ended yet, by status, in the whole database (all processes): the dial queue depth by state.", []string{"status"}, nil),
		kb:         prometheus.NewDesc("agentd_knowledge_sources_backlog", "Knowledge sources waiting for (pending) or in processing, in the whole database.", []string{"status"}, nil),
		open:       prometheus.NewDesc("agentd_db_open_connections", "Open database connections, by pool (writer, reader).", pool, nil),
		inUse:      prometheus.NewDesc("agentd_db_in_use_connections", "Database connections in use, by pool.", pool, nil),
		idle:       prometheus.NewDesc("agentd_db_idle_connections", "Idle database connections, by pool.", pool, nil),
		maxOpen:    prometheus.NewDesc("agentd_db_max_open_connections", "Connection limit of each pool.", pool, nil),
		waits:      prometheus.NewDesc("agentd_db_wait_count_total", "Times a query waited for a free connection, by pool.", pool, nil),
		waited:     prometheus.NewDesc("agentd_db_wait_duration_seconds_total", "Time queries waited for a free connection, by pool.", pool, nil),
		closedIdle: prometheus.NewDesc("agentd_db_closed_idle_total", "Connections closed for being idle too long, by pool.", pool, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.calls, c.kb, c.open, c.inUse, c.idle, c.maxOpen, c.waits, c.waited, c.closedIdle} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	gauges := func(d *prometheus.Desc, states []string, counts map[string]int, err error) {
		if err != nil {
			ch <- prometheus.NewInvalidMetric(d, err)
			return
		}
		for _, s := range states {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(counts[s]), s)
		}
	}
	calls, err := c.s.CallsInFlight(ctx)
	gauges(c.calls, callStates, calls, err)
	kb, err := c.s.KBBacklogByStatus(ctx)
	gauges(c.kb, kbStates, kb, err)
	for name, st := range c.s.PoolStats() {
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(st.OpenConnections), name)
		ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(st.InUse), name)
		ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(st.Idle), name)
		ch <- prometheus.MustNewConstMetric(c.maxOpen, prometheus.GaugeValue, float64(st.MaxOpenConnections), name)
		ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(st.WaitCount), name)
		ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, st.WaitDuration.Seconds(), name)
		ch <- prometheus.MustNewConstMetric(c.closedIdle, prometheus.CounterValue, float64(st.MaxIdleClosed+st.MaxIdleTimeClosed), name)
	}
}
