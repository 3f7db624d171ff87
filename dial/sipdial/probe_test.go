package sipdial

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/sipptest"
)

func TestProbeSIPAnswered(t *testing.T) {
	addr := sipptest.Start(t, "options_ok", sipptest.Options{}).Addr
	p, err := ProbeTrunk(t.Context(), Config{Trunk: addr, ResponseTimeout: 2 * time.Second})
	if err != nil || p.Status != 200 || p.Server != "sipp" {
		t.Fatalf("probe: %+v %v", p, err)
	}
}

// A trunk address where nothing answers fails within the response timeout.
func TestProbeSIPDeadTrunk(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(sipptest.FreePort(t))
	start := time.Now()
	_, err := ProbeTrunk(t.Context(), Config{Trunk: addr, ResponseTimeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "OPTIONS to trunk") {
		t.Fatalf("probe of a dead trunk: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}
