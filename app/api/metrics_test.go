package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/metrics"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// scrapeText reads /metrics.
func scrapeText(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// scrape reads /metrics and parses it with Prometheus' own text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(scrapeText(t, addr)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the value of the series of family name whose labels include
// want (0 when absent); histograms give their sample count.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// idLike matches what must never be a label value: UUIDs, our keys, long
// hex or base62 tokens, and raw paths with an id segment.
var idLike = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-|agd_|[0-9a-fA-F]{16,}|[A-Za-z0-9]{24,}`)

// /metrics parses with the Prometheus text parser, its counters move with
// traffic (requests, refusals, dials and outcomes, embeddings), the store
// gauges are there, and no label value anywhere is an id.
func TestMetricsMoveWithTrafficWithoutIDs(t *testing.T) {
	e := newTestEnv(t, fastSim(20*time.Millisecond), func(c *serveConfig) { c.MetricsAddr = "127.0.0.1:0" })
	addr := e.app.MetricsAddr()
	if addr == "" {
		t.Fatal("no metrics listener")
	}
	before := scrape(t, addr)
	if before["go_goroutines"] == nil || before["agentd_db_open_connections"] == nil || before["agentd_calls"] == nil {
		t.Fatal("runtime, pool or queue gauges missing")
	}

	for i := 0; i < 3; i++ {
		e.do("GET", "/healthz", "", nil)
	}
	var agent struct{ Data struct{ ID string } }
	if code := e.doJSON("POST", "/api/v1/agents", e.key, map[string]any{"name": "m", "type": "voice", "phoneNumbers": []string{"+14155550001"}}, &agent); code != 201 {
		t.Fatalf("create agent: %d", code)
	}
	e.do("GET", "/api/v1/agents/"+agent.Data.ID, e.key, nil)
	e.do("GET", "/api/v1/no-such/"+agent.Data.ID, e.key, nil)
	var call struct{ Data struct{ ID string } }
	if code := e.doJSON("POST", "/api/v1/calls/outbound", e.key, map[string]any{"agentId": agent.Data.ID, "phoneNumber": "+15551230001"}, &call); code != 201 {
		t.Fatalf("outbound: %d", code)
	}
	var col struct{ Data struct{ ID string } }
	if code := e.doJSON("POST", "/api/v1/kb/collections", e.key, map[string]any{"name": "m"}, &col); code != 201 {
		t.Fatalf("collection: %d", code)
	}
	e.do("POST", "/api/v1/kb/sources", e.key, map[string]any{"collectionId": col.Data.ID, "externalId": "x", "title": "t", "content": "# Hello\n\nSome words to embed."})
	limited := e.keyWithRole(e.orgID, "owner", access.KeyOptions{RateLimit: 1})
	e.do("GET", "/api/v1/agents", limited, nil)
	if code, _, _ := e.do("GET", "/api/v1/agents", limited, nil); code != 429 {
		t.Fatalf("second request of a 1/min key: %d, want 429", code)
	}

	var after map[string]*dto.MetricFamily
	testkit.Eventually(t, 15*time.Second, func() bool {
		after = scrape(t, addr)
		return value(after, "agentd_dial_outcomes_total", map[string]string{"outcome": "completed"}) >= 1 &&
			value(after, "agentd_embed_request_duration_seconds", nil) >= 1
	}, "dial outcome or embedding not counted")
	moved := func(name string, labels map[string]string, min float64) {
		t.Helper()
		if d := value(after, name, labels) - value(before, name, labels); d < min {
			t.Errorf("%s%v moved by %v, want at least %v", name, labels, d, min)
		}
	}
	moved("agentd_http_requests_total", map[string]string{"method": "GET", "route": "/healthz", "status": "200"}, 3)
	moved("agentd_http_requests_total", map[string]string{"method": "GET", "route": "/api/v1/agents/:id", "status": "200"}, 1)
	moved("agentd_http_requests_total", map[string]string{"method": "GET", "route": metrics.Unmatched, "status": "404"}, 1)
	moved("agentd_http_requests_total", map[string]string{"route": "/api/v1/calls/outbound", "status": "201"}, 1)
	moved("agentd_http_request_duration_seconds", map[string]string{"route": "/api/v1/agents"}, 3)
	moved("agentd_http_rate_limited_total", map[string]string{"route": "/api/v1/agents"}, 1)
	moved("agentd_dials_total", map[string]string{"dialer": "sim"}, 1)
	moved("agentd_dial_outcomes_total", map[string]string{"dialer": "sim", "outcome": "completed"}, 1)
	moved("agentd_embed_texts_total", map[string]string{"embedder": "builtin"}, 1)
	if v := value(after, "agentd_dial_cps_limit", nil); v != 200 {
		t.Errorf("cps limit %v, want 200", v)
	}

	// Prometheus' own linter (naming, units, help), when installed.
	if promtool, err := exec.LookPath("promtool"); err == nil {
		c := exec.Command(promtool, "check", "metrics")
		c.Stdin = strings.NewReader(scrapeText(t, addr))
		if out, err := c.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}

	routes := map[string]bool{metrics.Unmatched: true}
	for _, rt := range e.app.srv.table {
		routes[rt.path] = true
	}
	for name, f := range after {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if idLike.MatchString(l.GetValue()) || strings.Contains(l.GetValue(), agent.Data.ID) || strings.Contains(l.GetValue(), call.Data.ID) {
					t.Errorf("%s: label %s=%q looks like an id", name, l.GetName(), l.GetValue())
				}
				if l.GetName() == "route" && !routes[l.GetValue()] {
					t.Errorf("%s: route label %q is not a route pattern", name, l.GetValue())
				}
			}
		}
	}
}

// The example alert rules in the README are testdata/prometheus/alerts.yml,
// which promtool accepts (when installed) and which name only metrics that
// agentd serves.
func TestAlertRules(t *testing.T) {
	rules, err := os.ReadFile("../../testdata/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), string(rules)) {
		t.Error("README's alert rules differ from testdata/prometheus/alerts.yml")
	}
	e := newTestEnv(t, func(c *serveConfig) { c.MetricsAddr = "127.0.0.1:0" })
	e.do("GET", "/healthz", "", nil) // request counters appear with the first status
	served := scrape(t, e.app.MetricsAddr())
	for _, name := range regexp.MustCompile(`agentd_[a-z_]+`).FindAllString(string(rules), -1) {
		base := strings.TrimSuffix(name, "_bucket")
		if served[base] == nil {
			t.Errorf("alert rules name %s, which /metrics does not serve", name)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus)")
	}
	if out, err := exec.Command(promtool, "check", "rules", "../../testdata/prometheus/alerts.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// Without --metrics-addr there is no listener and nothing is collected.
func TestMetricsOffByDefault(t *testing.T) {
	e := newTestEnv(t)
	if e.app.MetricsAddr() != "" || e.app.srv.metrics != nil {
		t.Fatal("metrics on without --metrics-addr")
	}
}

// BenchmarkMetricsMiddleware is the cost the metrics add to one request:
// a no-op route served through the full middleware with and without a
// registry; the difference between "on" and "off" is the metrics' share
// (go test ./app -run '^$' -bench Metrics -benchtime 300000x -count 5).
func BenchmarkMetricsMiddleware(b *testing.B) {
	db := storetest.Open(b, filepath.Join(b.TempDir(), "a.db"))
	s := New(Config{Version: "test", Log: discardLogger()}, Deps{Access: features.NewAccess(db),
		Stores: Stores{Epoch: db, Orgs: db.Orgs, Calls: db.Calls, Agents: db.Agents}})
	s.handle(route{method: "GET", path: "/bench/:id", auth: authNone, summary: "bench"},
		func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
	withMetrics := newHTTPMetrics(metrics.New(), s)
	for _, on := range []bool{false, true} {
		name := "off"
		s.metrics = nil
		if on {
			name, s.metrics = "on", withMetrics
		}
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/bench/42", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				s.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkMetricsObserve is the metrics' own work per request, alone.
func BenchmarkMetricsObserve(b *testing.B) {
	reg := metrics.New()
	rt := reg.Route("GET", "/api/v1/agents/:id")
	b.ReportAllocs()
	for b.Loop() {
		rt.Observe(200, 1500*time.Microsecond)
	}
}
