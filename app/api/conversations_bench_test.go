package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// Conversation benchmarks over one collection of 100,000 one-chunk sources
// (the built-in embedder, default 1024 dimensions), seeded once through
// the knowledge service and its worker and cached in the temp dir:
//
//	go test ./app -run '^$' -bench 'Conversation' -benchtime 400x
//
// Each reports p50/p95 in ms (latencies) or turns/s.

const benchChunks = 100_000

var benchVocabulary = func() []string {
	r := rand.New(rand.NewSource(5))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	out := make([]string, 20_000)
	for i := range out {
		n := 4 + r.Intn(6)
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[r.Intn(len(letters))]
		}
		out[i] = string(b)
	}
	return out
}()

func convWords(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = benchVocabulary[r.Intn(len(benchVocabulary))]
	}
	return strings.Join(w, " ")
}

// convBenchDB seeds (once, cached by schema) the database: org "default"
// with its owner key printed at the first start, a collection "bench".
func convBenchDB(b *testing.B) string {
	names, _ := filepath.Glob("../../storage/migrations/*.sql")
	h := fnv.New32a()
	for _, n := range names {
		h.Write([]byte(filepath.Base(n)))
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("agentd-conv-bench-%08x-%d.db", h.Sum32(), benchChunks))
	if dbtest.Postgres() {
		b.Skip("the cached benchmark database is SQLite")
	}
	if _, err := os.Stat(path + ".done"); err == nil {
		return path
	}
	os.Remove(path)
	e := startTestEnv(b, path, func(c *serveConfig) { c.Log = discardLogger() })
	ctx := context.Background()
	col, err := e.app.srv.kb.CreateCollection(ctx, e.orgID, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(11))
	b.Logf("seeding %d chunks into %s", benchChunks, path)
	for s := 0; s < benchChunks; s += kb.MaxBatch {
		in := kb.BatchInput{CollectionID: col.ID}
		for i := s; i < min(benchChunks, s+kb.MaxBatch); i++ {
			raw, _ := json.Marshal(map[string]string{"externalId": fmt.Sprint(i), "title": "Source " + fmt.Sprint(i), "content": convWords(r, 60)})
			in.Sources = append(in.Sources, raw)
		}
		if _, err := e.app.srv.kb.UpsertBatch(ctx, e.orgID, in); err != nil {
			b.Fatal(err)
		}
	}
	testkit.Eventually(b, 20*time.Minute, func() bool {
		n, err := e.db.KB.KBBacklog(ctx, col.ID)
		if err != nil {
			b.Fatal(err)
		}
		return n == 0
	}, "sources still queued")
	os.WriteFile(path+".done", nil, 0o644)
	return path
}

// post sends JSON with a plain client (no schema check in the timing).
func post(b *testing.B, url, key string, body any) (int, []byte) {
	j, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(j))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// benchEnv starts agentd on the cached database with an agent answering
// from the collection, and returns a key without the rate limit's bound.
func benchEnv(b *testing.B, cfg func(*serveConfig)) (*testEnv, string, string) {
	path := convBenchDB(b)
	e := startTestEnv(b, path, func(c *serveConfig) { c.Log = discardLogger(); c.Webhooks.Disabled = true }, cfg)
	ctx := context.Background()
	o, err := e.db.Orgs.FindOrg(ctx, "default")
	if err != nil {
		b.Fatal(err)
	}
	e.orgID = o.ID
	c, err := e.db.KB.FindCollection(ctx, o.ID, "bench")
	if err != nil {
		b.Fatal(err)
	}
	key := e.keyWithRole(o.ID, "member", access.KeyOptions{RateLimit: access.MaxRateLimit})
	agent := e.createAgent(key, map[string]any{"name": "Bench", "type": "chat", "instructions": "Answer from the passages.",
		"knowledge": map[string]any{"collectionIds": []string{c.ID}, "topK": 5}})
	// Load the in-memory indexes (100,000 vectors and the text index) now,
	// not in the first timed turn.
	warm := e.startConversation(key, agent)
	for range 3 {
		post(b, e.url+"/api/v1/conversations/"+warm+"/messages", key, map[string]any{"content": "warm up the index"})
	}
	return e, key, agent
}

func percentile(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
}

// firstDelta posts a streamed request and returns the time to the first
// content delta, then reads the stream to its end.
func firstDelta(b *testing.B, client *http.Client, url string, header map[string]string, body []byte) time.Duration {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
	var ttft time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if ttft == 0 && strings.Contains(sc.Text(), `"content":"`) && !strings.Contains(sc.Text(), `"content":""`) {
			ttft = time.Since(start)
		}
	}
	if ttft == 0 {
		b.Fatal("no content delta")
	}
	return ttft
}

// BenchmarkConversationFirstToken: agentd's added time to first token on
// the OpenAI-compatible endpoint (retrieval over 100,000 chunks, prompt,
// trimming, proxying) over the scripted model's own, each measured from
// the client.
func BenchmarkConversationFirstToken(b *testing.B) {
	model := llmtest.New(b)
	model.Answer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "The answer is in the passages above."}
	})
	e, key, agent := benchEnv(b, func(c *serveConfig) {
		c.LLM = llm.Config{Kind: "openai", URL: model.URL, Model: "scripted", Timeout: 10 * time.Second}
	})
	client := &http.Client{}
	r := rand.New(rand.NewSource(3))
	body := func(q string) []byte {
		j, _ := json.Marshal(map[string]any{"model": agent, "stream": true, "messages": []any{map[string]any{"role": "user", "content": q}}})
		return j
	}
	direct := func(q string) []byte {
		j, _ := json.Marshal(map[string]any{"model": "scripted", "stream": true, "messages": []any{map[string]any{"role": "user", "content": q}}})
		return j
	}
	auth := map[string]string{"Authorization": "Bearer " + key}
	firstDelta(b, client, e.url+"/api/v1/openai/chat/completions", auth, body(convWords(r, 6))) // loads the indexes
	var via, own []time.Duration
	for b.Loop() {
		q := convWords(r, 6)
		via = append(via, firstDelta(b, client, e.url+"/api/v1/openai/chat/completions", auth, body(q)))
		own = append(own, firstDelta(b, client, model.URL+"/chat/completions", nil, direct(q)))
	}
	b.ReportMetric(percentile(via, 0.5), "agentd-p50-ms")
	b.ReportMetric(percentile(via, 0.95), "agentd-p95-ms")
	b.ReportMetric(percentile(own, 0.95), "model-p95-ms")
	b.ReportMetric(percentile(via, 0.95)-percentile(own, 0.95), "added-p95-ms")
}

// BenchmarkConversationBuiltin: a whole builtin answer through the
// conversation API (retrieval over 100,000 chunks, quoting, storing the
// turn), as the client sees it.
func BenchmarkConversationBuiltin(b *testing.B) {
	e, key, agent := benchEnv(b, func(*serveConfig) {})
	r := rand.New(rand.NewSource(4))
	conv := ""
	var ds []time.Duration
	turns := 0
	for b.Loop() {
		if turns%20 == 0 {
			conv = e.startConversation(key, agent)
		}
		turns++
		q := convWords(r, 6)
		start := time.Now()
		code, body := post(b, e.url+"/api/v1/conversations/"+conv+"/messages", key, map[string]any{"content": q})
		ds = append(ds, time.Since(start))
		if code != 200 {
			b.Fatalf("%d %s", code, body)
		}
	}
	b.ReportMetric(percentile(ds, 0.5), "p50-ms")
	b.ReportMetric(percentile(ds, 0.95), "p95-ms")
}

// BenchmarkConversationTurns: turns per second through the conversation
// API with the scripted model, 8 clients at once.
func BenchmarkConversationTurns(b *testing.B) {
	model := llmtest.New(b)
	e, key, agent := benchEnv(b, func(c *serveConfig) {
		c.LLM = llm.Config{Kind: "openai", URL: model.URL, Model: "scripted", Timeout: 10 * time.Second}
	})
	var seed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewSource(seed.Add(1)))
		conv, turns := "", 0
		for pb.Next() {
			if turns%20 == 0 {
				conv = e.startConversation(key, agent)
			}
			turns++
			if code, body := post(b, e.url+"/api/v1/conversations/"+conv+"/messages", key, map[string]any{"content": convWords(r, 6)}); code != 200 {
				b.Fatalf("%d %s", code, body)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
}
