package kb

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/search"
)

// speedSources are the speed benchmark's sources: one chunk each of 100
// Zipf-distributed words (deterministic, so a cached database and the
// reference vectors always agree).
func speedSources(n int) (titles, texts []string) {
	vocab := benchVocab(30_000)
	r := rand.New(rand.NewSource(17))
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	titles, texts = make([]string, n), make([]string, n)
	words := make([]string, 100)
	for i := range n {
		for w := range words {
			words[w] = vocab[z.Uint64()]
		}
		titles[i] = "Source " + fmt.Sprint(i)
		texts[i] = strings.Join(words, " ")
	}
	return titles, texts
}

// seedSpeedBench builds (once, cached in the temp dir) a database with one
// collection of n one-chunk sources, ingested the production way: batches of
// 50 through UpsertBatch, chunked and embedded by the background worker with
// the built-in embedder at dims.
func seedSpeedBench(b *testing.B, n, dims int) (path, orgID, colID string) {
	path = filepath.Join(os.TempDir(), fmt.Sprintf("agentd-kb-speed-%s-%d-%d.db", schemaTag(), n, dims))
	ctx := context.Background()
	if _, err := os.Stat(path + ".done"); err == nil {
		db := openDB(b, path)
		o, err := db.Orgs.FindOrg(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		c, err := db.KB.FindCollection(ctx, o.ID, "bench")
		if err != nil {
			b.Fatal(err)
		}
		return path, o.ID, c.ID
	}
	os.Remove(path)
	db := openDB(b, path)
	orgID = newOrg(b, db, "bench")
	emb, _ := embed.NewBuiltin(dims)
	k, stop := startKB(b, db, orgID, testCfg(emb))
	colID = k.collection("bench")
	titles, texts := speedSources(n)
	b.Logf("seeding %d sources (cached in %s)", n, path)
	for s := 0; s < n; s += MaxBatch {
		in := BatchInput{CollectionID: colID}
		for i := s; i < min(n, s+MaxBatch); i++ {
			raw, _ := json.Marshal(map[string]string{"externalId": fmt.Sprint(i), "title": titles[i], "content": texts[i]})
			in.Sources = append(in.Sources, raw)
		}
		if _, err := k.svc.UpsertBatch(ctx, orgID, in); err != nil {
			b.Fatal(err)
		}
	}
	waitBacklog(b, db, colID, 10*time.Minute)
	stop()
	os.WriteFile(path+".done", nil, 0o644)
	return path, orgID, colID
}

// schemaTag names the schema a cached benchmark database is made with (a
// hash of the migration file names): a file of another schema, which
// would not migrate, is never reused.
func schemaTag() string {
	names, _ := filepath.Glob("../../storage/migrations/*.sql")
	h := fnv.New32a()
	for _, n := range names {
		h.Write([]byte(filepath.Base(n)))
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// waitBacklog waits until no source of the collection is pending or processing.
func waitBacklog(b testing.TB, db *storage.Stores, colID string, limit time.Duration) {
	n := 0
	if !testkit.Within(limit, func() bool {
		var err error
		if n, err = db.KB.KBBacklog(context.Background(), colID); err != nil {
			b.Fatal(err)
		}
		return n == 0
	}) {
		b.Fatalf("%d sources still queued after %s", n, limit)
	}
}

// exactScan is the reference of the speed benchmark: an exact float32
// brute-force scan of a row-major matrix on every core (one goroutine per
// core, AVX2 FMA dot products where the CPU has them), keeping the k best
// rows of each part and merging them.
type exactScan struct {
	dims int
	vecs []float32
}

type scored struct {
	row   int
	score float32
}

func (x *exactScan) search(q []float32, k int) []scored {
	n := len(x.vecs) / x.dims
	p := runtime.GOMAXPROCS(0)
	per := (n + p - 1) / p
	parts := make([][]scored, p)
	var wg sync.WaitGroup
	for pi := range p {
		wg.Go(func() {
			var top []scored // sorted best first, at most k
			for i := pi * per; i < min(n, (pi+1)*per); i++ {
				s := search.Dot(q, x.vecs[i*x.dims:(i+1)*x.dims])
				if len(top) == k && s <= top[k-1].score {
					continue
				}
				j := sort.Search(len(top), func(j int) bool { return top[j].score < s })
				if len(top) < k {
					top = append(top, scored{})
				}
				copy(top[j+1:], top[j:])
				top[j] = scored{i, s}
			}
			parts[pi] = top
		})
	}
	wg.Wait()
	var all []scored
	for _, t := range parts {
		all = append(all, t...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a].score > all[b].score })
	return all[:min(k, len(all))]
}

// BenchmarkSearchVsExact is issue 16's speed check, all in one run over
// 100,000 one-chunk sources of 1,024 dimensions (built-in embedder, cached
// database seeded through the batch use case and the worker). Each
// iteration takes a new query (2-5 Zipf words, never the same twice; no
// result cache exists) and times, one after the other:
//   - exact-ms: the reference, an exact float32 brute-force scan of the same
//     vectors on all cores (query vector given, nothing else);
//   - semantic-ms: agentd's semantic search as POST /api/v1/kb/search runs
//     it (embed the query, catch up with the change log, index search,
//     read the chunks), with semantic/exact the ratio of the totals;
//   - hybrid-ms: the default hybrid search (BM25 + semantic + fusion +
//     read), hybrid/exact likewise.
//
// recall@10 is the index's top 10 against the reference's: a hit counts
// when its exact score reaches the reference's 10th (ties count as found).
// dense-index/exact and dense-recall@10 do the same for a random dense
// query vector, as a real model's queries are, on the vector index alone
// (the built-in embedder's few-word queries have few non-zero dimensions,
// which the int8 scan skips). MiB is the Go heap of the loaded indexes
// (vectors and BM25).
//
//	go test ./app/kb -run '^$' -bench SearchVsExact -benchtime 200x
func BenchmarkSearchVsExact(b *testing.B) {
	const n, dims = 100_000, 1024
	emb, _ := embed.NewBuiltin(dims)
	ctx := context.Background()

	// The reference matrix: the worker's own chunking and embedding text.
	titles, texts := speedSources(n)
	ch, _ := embed.NewChunker(embed.DefaultChunkTokens, embed.DefaultOverlap)
	ref := &exactScan{dims: dims, vecs: make([]float32, 0, n*dims)}
	for s := 0; s < n; s += 1000 {
		var batch []string
		for i := s; i < min(n, s+1000); i++ {
			cs := ch.Chunk(texts[i])
			if len(cs) != 1 {
				b.Fatalf("source %d has %d chunks", i, len(cs))
			}
			batch = append(batch, embed.EmbedText(titles[i], cs[0]))
		}
		vs, _ := emb.Embed(ctx, batch)
		for _, v := range vs {
			ref.vecs = append(ref.vecs, v...)
		}
	}

	path, _, colID := seedSpeedBench(b, n, dims)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Open(ctx, deps(openDB(b, path)), testCfg(emb), nil)
	if err != nil {
		b.Fatal(err)
	}
	s.Warm(ctx)
	runtime.GC()
	runtime.ReadMemStats(&after)

	vocab := benchVocab(30_000)
	r := rand.New(rand.NewSource(3))
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	seen := map[string]bool{}
	newQuery := func() string { // never the same query twice
		for {
			words := make([]string, 2+r.Intn(4))
			for w := range words {
				words[w] = vocab[z.Uint64()]
			}
			if q := strings.Join(words, " "); !seen[q] {
				seen[q] = true
				return q
			}
		}
	}
	space := kbstore.KBSpace(colID)
	var tExact, tSem, tHyb, tDenseExact, tDense time.Duration
	found, foundD, total := 0, 0, 0
	rd := rand.New(rand.NewSource(5))
	// matches counts the hits of got whose exact score reaches the
	// reference's 10th (ties count as found).
	matches := func(q []float32, want []scored, got []search.VectorHit) int {
		ids := make([]int64, len(got))
		for i, h := range got {
			ids[i] = h.ID
		}
		chunks, err := s.db.KB.KBChunks(ctx, ids)
		if err != nil {
			b.Fatal(err)
		}
		n, floor := 0, want[len(want)-1].score
		for _, id := range ids {
			var row int
			fmt.Sscan(chunks[id].ExternalID, &row)
			if search.Dot(q, ref.vecs[row*dims:(row+1)*dims]) >= floor-1e-6 {
				n++
			}
		}
		return n
	}
	for b.Loop() {
		q := newQuery()
		qv, _ := emb.Embed(ctx, []string{q})

		t0 := time.Now()
		want := ref.search(qv[0], 10)
		t1 := time.Now()
		sem, err := s.search(ctx, SearchRequest{CollectionID: colID, Query: q, Limit: 10, Mode: ModeSemantic})
		t2 := time.Now()
		hyb, err2 := s.search(ctx, SearchRequest{CollectionID: colID, Query: q, Limit: 10, Mode: ModeHybrid})
		t3 := time.Now()
		if err != nil || err2 != nil || len(hyb) == 0 {
			b.Fatal(err, err2, len(sem), len(hyb))
		}
		tExact += t1.Sub(t0)
		tSem += t2.Sub(t1)
		tHyb += t3.Sub(t2)

		// Recall of the vector index itself (what semantic search ranks by).
		got, err := s.index.Search(ctx, space, qv[0], 10, nil)
		if err != nil {
			b.Fatal(err)
		}
		found += matches(qv[0], want, got)
		total += len(want)

		// A dense query, as a real model's: the int8 scan reads every
		// dimension (the built-in embedder's few-word queries let it skip
		// most of them).
		dq := make([]float32, dims)
		for i := range dq {
			dq[i] = float32(rd.NormFloat64())
		}
		normalizeVec(dq)
		t4 := time.Now()
		wantD := ref.search(dq, 10)
		t5 := time.Now()
		gotD, err := s.index.Search(ctx, space, dq, 10, nil)
		t6 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		tDenseExact += t5.Sub(t4)
		tDense += t6.Sub(t5)
		foundD += matches(dq, wantD, gotD)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(tExact), "exact-ms")
	b.ReportMetric(ms(tSem), "semantic-ms")
	b.ReportMetric(ms(tHyb), "hybrid-ms")
	b.ReportMetric(float64(tSem)/float64(tExact), "semantic/exact")
	b.ReportMetric(float64(tHyb)/float64(tExact), "hybrid/exact")
	b.ReportMetric(float64(found)/float64(total), "recall@10")
	b.ReportMetric(float64(tDense)/float64(tDenseExact), "dense-index/exact")
	b.ReportMetric(float64(foundD)/float64(total), "dense-recall@10")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB")
}
