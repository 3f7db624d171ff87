package kb

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/vectorstore"
)

// benchVocab is a synthetic vocabulary of pronounceable words; text drawn
// from it with Zipf frequencies has the long tail of real text.
func benchVocab(n int) []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "de", "pa", "zu", "ge", "fo", "bi", "ha", "jo"}
	r := rand.New(rand.NewSource(5))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		w := ""
		for range 2 + r.Intn(3) {
			w += syl[r.Intn(len(syl))]
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// seedKBBench builds (once, cached in the temp dir) a database with one
// collection of n chunks of ~120 Zipf-distributed words, embedded by the
// built-in embedder at dims, written through the worker's storage calls.
func seedKBBench(b *testing.B, n, dims int) (path, orgID, colID string) {
	path = filepath.Join(os.TempDir(), fmt.Sprintf("agentd-kb-bench-%s-%d-%d.db", schemaTag(), n, dims))
	ctx := context.Background()
	pg := dbtest.Postgres()
	if pg { // a fresh database, seeded on every run (the cache is a file)
		path = dbtest.Path(b, "kb-bench")
	} else if _, err := os.Stat(path + ".done"); err == nil {
		db, err := storage.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
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
	if !pg {
		os.Remove(path)
	}
	db, err := storage.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	o, err := db.Orgs.CreateOrg(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	c, err := db.KB.CreateCollection(ctx, o.ID, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	emb, _ := embed.NewBuiltin(dims)
	m := vectorstore.VectorModel{Embedder: emb.Name(), Model: emb.Model(), Dims: dims}
	vocab := benchVocab(30_000)
	r := rand.New(rand.NewSource(11))
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	const perSource = 100
	for s := 0; s < n/perSource; s++ {
		if _, err := db.KB.UpsertSource(ctx, o.ID, c.ID, kbstore.SourceInput{ExternalID: fmt.Sprint(s), Title: "Source " + fmt.Sprint(s), Content: fmt.Sprint(s)}); err != nil {
			b.Fatal(err)
		}
		jobs, _, err := db.KB.ClaimKBSources(ctx, "seed", 1e12, 1, 0)
		if err != nil || len(jobs) != 1 {
			b.Fatal(jobs, err)
		}
		chunks := make([]kbstore.KBChunk, perSource)
		texts := make([]string, perSource)
		for i := range chunks {
			words := make([]string, 120)
			for w := range words {
				words[w] = vocab[z.Uint64()]
			}
			texts[i] = strings.Join(words, " ")
			chunks[i] = kbstore.KBChunk{Index: i, Content: texts[i], HeadingPath: []string{}, Tokens: 120, Body: texts[i]}
		}
		vecs, _ := emb.Embed(ctx, texts)
		for i := range chunks {
			chunks[i].Vec = vecs[i]
		}
		if n, err := db.KB.CompleteKBSources(ctx, "seed", m, []kbstore.KBDone{{Job: jobs[0], Chunks: chunks}}); err != nil || n != 1 {
			b.Fatal(n, err)
		}
	}
	if !pg {
		os.WriteFile(path+".done", nil, 0o644)
	}
	return path, o.ID, c.ID
}

// BenchmarkHybridSearch is POST /api/v1/kb/search's work in process
// (BM25 top 40 + vector top 40 + RRF + reading the 10 chunks) over a
// collection of 100,000 chunks, with queries of 2-5 words drawn from the
// corpus's own Zipf distribution. The first run seeds a cached database in
// the temp dir (minutes). recall@10 is the vector part against exact search.
//
//	go test ./app/kb -run '^$' -bench HybridSearch -benchtime 200x -count 3
func BenchmarkHybridSearch(b *testing.B) {
	for _, dims := range []int{384, 1536} {
		b.Run(fmt.Sprintf("chunks=100000/dims=%d", dims), func(b *testing.B) {
			path, _, colID := seedKBBench(b, 100_000, dims)
			emb, _ := embed.NewBuiltin(dims)
			ctx := context.Background()
			s, err := Open(ctx, deps(openDB(b, path)), testCfg(emb), nil)
			if err != nil {
				b.Fatal(err)
			}
			// Both in-memory indexes loaded (as the server does at start).
			if err := s.index.Warm(ctx, "kb:"); err != nil {
				b.Fatal(err)
			}
			if err := s.text.Warm(ctx, "kb:"); err != nil {
				b.Fatal(err)
			}
			vocab := benchVocab(30_000)
			r := rand.New(rand.NewSource(3))
			z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
			queries := make([]string, 100)
			for i := range queries {
				words := make([]string, 2+r.Intn(4))
				for w := range words {
					words[w] = vocab[z.Uint64()]
				}
				queries[i] = strings.Join(words, " ")
			}
			i := 0
			for b.Loop() {
				res, err := s.search(ctx, SearchRequest{CollectionID: colID, Query: queries[i%len(queries)], Limit: 10, Mode: ModeHybrid})
				if err != nil || len(res) == 0 {
					b.Fatal(err, len(res))
				}
				i++
			}
			found, total := 0, 0
			for _, q := range queries[:30] {
				v, _ := emb.Embed(ctx, []string{q})
				want := map[int64]bool{}
				ex, _ := s.index.SearchExact(ctx, kbstore.KBSpace(colID), v[0], 10)
				for _, h := range ex {
					want[h.ID] = true
				}
				got, _ := s.index.Search(ctx, kbstore.KBSpace(colID), v[0], 10, nil)
				for _, h := range got {
					if want[h.ID] {
						found++
					}
				}
				total += len(want)
			}
			b.ReportMetric(float64(found)/float64(total), "recall@10")
		})
	}
}
