package api

import (
	"net/http"
	"time"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/metrics"
)

// httpMetrics is the request side of the metrics: one metrics.Route per
// entry of the route table, by the entry's index, so a request's label is
// its route pattern, looked up without hashing.
type httpMetrics struct {
	reg    *metrics.Registry
	routes []*metrics.Route
	table  func() []route
}

// newHTTPMetrics makes the metrics of every route in s's table.
func newHTTPMetrics(reg *metrics.Registry, s *Server) *httpMetrics {
	m := &httpMetrics{reg: reg, table: func() []route { return s.table }}
	for _, rt := range s.table {
		m.routes = append(m.routes, reg.Route(rt.method, rt.path))
	}
	return m
}

// observe records one request; route is 1 + the index of the matched
// route in the table, 0 when none matched.
func (m *httpMetrics) observe(method string, route, status int, d time.Duration) {
	m.route(method, route).Observe(status, d)
}

func (m *httpMetrics) route(method string, route int) *metrics.Route {
	switch {
	case route > 0 && route <= len(m.routes):
		return m.routes[route-1]
	case route > len(m.routes):
		// A route added after the server was wired (tests).
		rt := m.table()[route-1]
		return m.reg.Route(rt.method, rt.path)
	}
	return m.reg.UnmatchedRoute(method)
}

// countRateLimited records a request refused by the rate limit.
func (s *Server) countRateLimited(r *http.Request) {
	if s.metrics == nil {
		return
	}
	if ri := httpx.RequestInfoOf(r.Context()); ri != nil {
		s.metrics.route(r.Method, ri.Route).RateLimited()
	}
}
