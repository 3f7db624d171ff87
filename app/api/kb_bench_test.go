package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/testkit"
)

// BenchmarkKBIngest posts 20,000 one-chunk sources (100 Zipf-distributed
// words, ~600 bytes each) per iteration through POST
// /api/v1/kb/sources/batch, 50 per request from 2 concurrent clients, with
// the server's default knowledge settings (built-in embedder, 1,024
// dimensions, 2 workers). Two rates, both counted from the first request:
//   - accepted/s: every request answered (sources stored, queued);
//   - completed/s: every source chunked, embedded and stored with its
//     vectors by the background worker (no source pending or processing).
//
// It also reports the process's CPU time per source (user and system,
// including the client's) and the rate that cost allows on 2 cores
// (an upper bound: the single SQLite writer serialises part of the work).
//
// README target: completed >= 3,000/s on 2 cores.
//
//	go test ./app -run '^$' -bench KBIngest -benchtime 3x
func BenchmarkKBIngest(b *testing.B) {
	e := newTestEnv(b, func(c *serveConfig) { c.Log = discardLogger() })
	key := e.keyWithRole(e.orgID, "owner", access.KeyOptions{RateLimit: access.MaxRateLimit}) // 400 requests per iteration
	col := e.createCollection(key, "ingest")
	const perIter, batch, clients = 20_000, 50, 2
	r := rand.New(rand.NewSource(1))
	z := rand.NewZipf(r, 1.07, 2, 19_999)
	word := func() string { return fmt.Sprintf("w%x", z.Uint64()*2654435761%1_000_003) }
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	ctx := context.Background()
	var tAcc, tDone, cpu time.Duration
	for iter := 0; b.Loop(); iter++ {
		b.StopTimer()
		bodies := make([][]byte, 0, perIter/batch)
		for s := 0; s < perIter; s += batch {
			srcs := make([]map[string]string, batch)
			for i := range srcs {
				words := make([]string, 100)
				for w := range words {
					words[w] = word()
				}
				srcs[i] = map[string]string{"externalId": fmt.Sprintf("%d-%d", iter, s+i),
					"title": fmt.Sprintf("Source %d", s+i), "content": strings.Join(words, " ")}
			}
			body, _ := json.Marshal(map[string]any{"collectionId": col, "sources": srcs})
			bodies = append(bodies, body)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		next := make(chan []byte)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for body := range next {
					req, _ := http.NewRequest("POST", e.url+"/api/v1/kb/sources/batch", bytes.NewReader(body))
					req.Header.Set("x-api-key", key)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("batch: %d", resp.StatusCode)
					}
				}
			})
		}
		for _, body := range bodies {
			next <- body
		}
		close(next)
		wg.Wait()
		tAcc += time.Since(start)
		testkit.Eventually(b, 5*time.Minute, func() bool {
			n, err := e.db.KB.KBBacklog(ctx, col)
			if err != nil {
				b.Fatal(err)
			}
			return n == 0
		}, "sources still queued after 5 minutes")
		tDone += time.Since(start)
		cpu += processCPU() - cpu0
	}
	b.ReportMetric(float64(perIter*b.N)/tAcc.Seconds(), "accepted/s")
	b.ReportMetric(float64(perIter*b.N)/tDone.Seconds(), "completed/s")
	// CPU time per source, and the rate 2 cores give at that cost when the
	// machine runs nothing else (the wall-time rates fall with other load).
	b.ReportMetric(float64(cpu.Microseconds())/float64(perIter*b.N), "cpu-µs/source")
	if cpu > 0 {
		b.ReportMetric(2*float64(perIter*b.N)/cpu.Seconds(), "2-core-cpu-bound/s")
	}
}
