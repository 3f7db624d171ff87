package test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkWrites measures the write throughput of one and of three agentd
// processes on one database (the backend under test; scripts/pg-latency.sh
// runs it on PostgreSQL behind a latency proxy): six clients spread over
// the processes for writeSpan each post batches of 100 calls (scheduled
// for tomorrow, so no dialling competes) or upsert knowledge sources. The
// figures are calls/s and upserts/s over the span, all processes together.
func BenchmarkWrites(b *testing.B) {
	const clients, writeSpan = 6, 8 * time.Second
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			procs, _ := startProcs(b, n, nil)
			key := procs[0].newKey(100_000)
			agent := procs[0].voiceAgent(key, "Writer")
			coll := dataID(b, procs[0].must("POST", "/api/v1/kb/collections", key, map[string]any{"name": "Bench"}))
			tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
			b.ResetTimer()
			for it := range b.N {
				for _, kind := range []string{"batches", "sources"} {
					var done atomic.Int64
					var wg sync.WaitGroup
					start, cpu := time.Now(), machineCPU()
					for c := range clients {
						p := procs[c%n]
						wg.Go(func() {
							for i := 0; time.Since(start) < writeSpan; i++ {
								if kind == "batches" {
									cs := make([]any, 100)
									for j := range cs {
										cs[j] = map[string]any{"contactPhone": fmt.Sprintf("+1%d%d%03d%05d", it%10, c, i%1000, j)}
									}
									r := p.must("POST", "/api/v1/calls/batch", key, map[string]any{"agentId": agent,
										"defaultScheduledAt": tomorrow, "calls": cs})
									if r.status != 201 {
										b.Errorf("batch: %d %s", r.status, r.body)
										return
									}
									done.Add(100)
									continue
								}
								r := p.must("POST", "/api/v1/kb/sources", key, map[string]any{"collectionId": coll,
									"externalId": fmt.Sprintf("doc-%d-%d-%d", it, c, i%200), "title": "Doc",
									"content": strings.Repeat(fmt.Sprintf("Paragraph %d of client %d, pass %d. ", i, c, it), 8)})
								if r.status != 200 && r.status != 201 {
									b.Errorf("source: %d %s", r.status, r.body)
									return
								}
								done.Add(1)
							}
						})
					}
					wg.Wait()
					unit := map[string]string{"batches": "calls/s", "sources": "upserts/s"}[kind]
					b.ReportMetric(float64(done.Load())/time.Since(start).Seconds(), unit)
					b.ReportMetric(cpu(), kind+"-cpu-busy-%")
				}
			}
		})
	}
}
