package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/testbin"
)

// BenchmarkDials measures how many calls a second one and three agentd
// processes on one database (the backend under test: SQLite, or
// PostgreSQL with AGENTD_TEST_POSTGRES) claim and dial when the trunk's
// budget does not limit them: 2,000 calls due at once, a sim dialer that
// neither rings nor talks long, a CPS and a cap far above what the claims
// reach (AGENTD_BENCH_DIALS sets another count). The figure is dials/s from the first dial to the last (dial logs).
func BenchmarkDials(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			procs, dir := startProcs(b, n, func(dir string, i int) []string {
				return []string{"--dialer", "sim", "--sim-ring-seconds", "0", "--sim-call-seconds", "0.05",
					"--dial-cps", "100000", "--max-concurrent-calls", "2000", "--dial-log", filepath.Join(dir, fmt.Sprintf("dial-%d.log", i))}
			})
			key := procs[0].Key
			agent := procs[0].voiceAgent(key, "Dialer")
			dials := func() []testbin.Dial { return allDials(b, dir, n) }
			calls := 2000
			if n, err := strconv.Atoi(os.Getenv("AGENTD_BENCH_DIALS")); err == nil && n > 1 {
				calls = n // scripts/pg-latency.sh: fewer through the latency proxy
			}
			var rates, busy []float64
			b.ResetTimer()
			for it := range b.N {
				before, cpu := len(dials()), machineCPU()
				var wg sync.WaitGroup
				for half := range 2 { // two batches of 1,000, due at once
					wg.Go(func() {
						var cs []any
						for i := range calls / 2 {
							cs = append(cs, map[string]any{"contactPhone": fmt.Sprintf("+1415%d%d%05d", it%10, half, 10000+i)})
						}
						if r := procs[half%n].must("POST", "/api/v1/calls/batch", key, map[string]any{"agentId": agent, "calls": cs}); r.status != 201 {
							b.Errorf("batch: %d %s", r.status, r.body)
						}
					})
				}
				wg.Wait()
				var all []testbin.Dial
				// The rate comes from the dials' own times: look seldom, so
				// re-reading the logs takes little of the CPU measured.
				if !testkit.WithinEvery(2*time.Minute, 250*time.Millisecond, func() bool {
					all = dials()
					return len(all) >= before+calls
				}) {
					b.Fatalf("%d of %d calls dialled in two minutes", len(all)-before, calls)
				}
				run := all[before:]
				rates = append(rates, float64(len(run)-1)/run[len(run)-1].At.Sub(run[0].At).Seconds())
				busy = append(busy, cpu())
			}
			b.StopTimer()
			slices.Sort(rates)
			b.ReportMetric(rates[len(rates)/2], "dials/s")
			slices.Sort(busy)
			b.ReportMetric(busy[len(busy)/2], "cpu-busy-%")
		})
	}
}
