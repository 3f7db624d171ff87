package test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
)

// envInt reads a positive integer knob of the reliability suite (for the
// long variants documented in RELIABILITY.md), or def when unset.
func envInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// newKey creates an API key of the default organization's first owner
// through the CLI, with the given per-minute rate limit.
func (s *server) newKey(rate int) string {
	s.t.Helper()
	var k struct {
		Key string `json:"key"`
	}
	out := s.cli("key", "create", "--rate-limit", strconv.Itoa(rate), "--never-expires", "--json")
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.Key == "" {
		s.t.Fatalf("key create: %v\n%s", err, out)
	}
	return k.Key
}

// rssKB is the resident set size of the child process in KiB, from
// /proc/<pid>/status (Linux only; 0 elsewhere).
func (s *server) rssKB() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// latencies collects request durations per endpoint label.
type latencies struct {
	mu sync.Mutex
	by map[string][]time.Duration
}

func (l *latencies) add(label string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string][]time.Duration{}
	}
	l.by[label] = append(l.by[label], d)
}

// pct is the p-th percentile (nearest rank) of sorted durations.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// table renders count, p50, p99 and max per endpoint, one line each.
func (l *latencies) table() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	labels := make([]string, 0, len(l.by))
	for k := range l.by {
		labels = append(labels, k)
	}
	slices.Sort(labels)
	var b strings.Builder
	fmt.Fprintf(&b, "%-36s %7s %9s %9s %9s\n", "endpoint", "count", "p50", "p99", "max")
	for _, k := range labels {
		ds := slices.Clone(l.by[k])
		slices.Sort(ds)
		fmt.Fprintf(&b, "%-36s %7d %9s %9s %9s\n", k, len(ds), round(pct(ds, 0.50)), round(pct(ds, 0.99)), round(ds[len(ds)-1]))
	}
	return b.String()
}

func round(d time.Duration) time.Duration {
	if d > 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// waitFor polls cond until it holds or limit passes.
func waitFor(limit time.Duration, cond func() bool) bool { return testkit.Within(limit, cond) }
