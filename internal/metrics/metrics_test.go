package metrics

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type fakeStore struct{}

func (fakeStore) CallsInFlight(context.Context) (map[string]int, error) {
	return map[string]int{"queued": 3}, nil
}
func (fakeStore) KBBacklogByStatus(context.Context) (map[string]int, error) { return nil, nil }
func (fakeStore) PoolStats() map[string]sql.DBStats {
	return map[string]sql.DBStats{"writer": {MaxOpenConnections: 1}}
}

func TestExposition(t *testing.T) {
	r := New()
	if err := r.CollectStore(fakeStore{}); err != nil {
		t.Fatal(err)
	}
	q := r.Queue("sim")
	q.QueueStarted(5, 10)
	q.DialStarted("sim")
	r.Route("GET", "/x/:id").Observe(200, time.Millisecond)
	r.UnmatchedRoute("BREW").Observe(404, time.Millisecond)
	w := httptest.NewRecorder()
	r.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body := w.Body.String()
	for _, want := range []string{
		`agentd_dial_outcomes_total{dialer="sim",outcome="no_answer"} 0`, // series exist before the first call
		`agentd_dials_total{dialer="sim"} 1`,
		`agentd_dials_in_progress 1`,
		`agentd_dial_cps_limit 5`,
		`agentd_calls{status="queued"} 3`,
		`agentd_calls{status="active"} 0`,
		`agentd_knowledge_sources_backlog{status="pending"} 0`,
		`agentd_db_max_open_connections{pool="writer"} 1`,
		`agentd_http_requests_total{method="GET",route="/x/:id",status="200"} 1`,
		`agentd_http_requests_total{method="other",route="unmatched",status="404"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s", want)
		}
	}
}
