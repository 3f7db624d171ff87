package kb

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/embed"
)

// evalEmbedders are the embedders the evaluation runs with
// (AGENTD_EVAL_EMBEDDERS, comma-separated): "builtin", and "synthetic" or
// "synthetic:LEX:NOISE", the stand-in for an external model
// (syntheticEmbedder; default strength 0.5:0.985, as good as BM25 give or
// take a quarter).
func evalEmbedders() []string {
	if v := os.Getenv("AGENTD_EVAL_EMBEDDERS"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"builtin", "synthetic"}
}

// newEvalEmbedder builds an embedder named as in evalEmbedders.
func newEvalEmbedder(t testing.TB, name string, c *beir) embed.Embedder {
	b, err := embed.NewBuiltin(embed.DefaultBuiltinDims)
	if err != nil {
		t.Fatal(err)
	}
	if name == "builtin" {
		return b
	}
	lex, noise := 0.5, 0.985
	if rest, ok := strings.CutPrefix(name, "synthetic:"); ok {
		if _, err := fmt.Sscanf(strings.ReplaceAll(rest, ":", " "), "%g %g", &lex, &noise); err != nil {
			t.Fatalf("embedder %q: want synthetic:LEX:NOISE", name)
		}
	} else if name != "synthetic" {
		t.Fatalf("unknown embedder %q", name)
	}
	return newSyntheticEmbedder(b, c, lex, noise)
}

// evalScores is the mean nDCG@10 and recall@10 of one run.
type evalScores struct{ ndcg, recall float64 }

// run asks every judged query of c in mode (alpha nil: the default) and
// ranks documents by their best chunk.
func (k *testKB) run(col string, c *beir, mode string, alpha *float64) evalScores {
	k.t.Helper()
	var s evalScores
	for _, q := range c.queries {
		limit := evalChunks
		in := SearchInput{CollectionID: col, Query: &q.Text, Mode: mode, Limit: &limit, Alpha: alpha}
		res, err := k.svc.Search(context.Background(), k.org, in)
		if err != nil {
			k.t.Fatalf("search %q: %v", q.Text, err)
		}
		top := topDocs(res)
		s.ndcg += ndcgAt10(top, c.qrels[q.ID])
		s.recall += recallAt10(top, c.qrels[q.ID])
	}
	n := float64(len(c.queries))
	return evalScores{s.ndcg / n, s.recall / n}
}

// nonsenseWords are made-up words (seeded, so every run asks the same).
func nonsenseWords(n int) []string {
	r := rand.New(rand.NewSource(16))
	const letters = "bcdfghjklmnpqrstvwxz"
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 7+r.Intn(4))
		for j := range b {
			b[j] = letters[r.Intn(len(letters))]
		}
		out[i] = string(b)
	}
	return out
}

// TestSearchQuality is the search evaluation: every collection of the
// shared eval folder (BEIR layout; AGENTD_EVAL picks some, AGENTD_EVAL_ROOT
// moves the folder) is loaded through the batch use case into a real
// SQLite file, and every judged query runs through Search in each mode,
// once per embedder. It prints nDCG@10 and recall@10 per mode and fails
// when the default (hybrid) ranks below the better of keyword and
// semantic, when keyword falls below Cranfield's published BM25 baseline,
// or when a made-up word finds anything. AGENTD_EVAL_SWEEP=1 also prints
// hybrid at every alpha (how the defaults were chosen) and the calibration
// of the relevance floor (the best cosine a made-up word reaches).
//
//	go test ./app/kb -run SearchQuality -v
//	AGENTD_EVAL=nfcorpus AGENTD_EVAL_EMBEDDERS=synthetic:0.5:0.97 AGENTD_EVAL_SWEEP=1 go test ./app/kb -run SearchQuality -v
func TestSearchQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("search evaluation skipped under -short")
	}
	dirs := evalCollections()
	if len(dirs) == 0 {
		t.Skip("no evaluation collections (set AGENTD_EVAL_ROOT to the folder of shared/eval)")
	}
	sweep := os.Getenv("AGENTD_EVAL_SWEEP") != ""
	var table []string
	for _, dir := range dirs {
		c := readBEIR(t, dir)
		for _, en := range evalEmbedders() {
			emb := newEvalEmbedder(t, en, c)
			k := newKB(t, testCfg(emb))
			col := k.collection(c.name)
			k.load(col, c)
			kw := k.run(col, c, ModeKeyword, nil)
			sem := k.run(col, c, ModeSemantic, nil)
			hyb := k.run(col, c, ModeHybrid, nil)
			tun := k.svc.SearchTuning()
			row := fmt.Sprintf("| %s | %s | %.4f / %.4f | %.4f / %.4f | %.4f / %.4f (alpha %.2f) |", c.name, en,
				kw.ndcg, kw.recall, sem.ndcg, sem.recall, hyb.ndcg, hyb.recall, tun.Alpha)
			t.Log(row)
			table = append(table, row)
			if best := max(kw.ndcg, sem.ndcg); hyb.ndcg < best {
				t.Errorf("%s, %s: hybrid nDCG@10 %.4f below the better single mode %.4f", c.name, en, hyb.ndcg, best)
			}
			if c.name == "cranfield" && kw.ndcg < 0.3685 {
				t.Errorf("cranfield keyword nDCG@10 %.4f below plain BM25 (0.369)", kw.ndcg)
			}
			k.checkNonsense(col, c, emb, sweep)
			if sweep {
				line := c.name + " " + en + " hybrid nDCG@10 by alpha:"
				for a := 0.0; a <= 1.0001; a += 0.05 {
					a := min(a, 1)
					line += fmt.Sprintf(" %.2f=%.4f", a, k.run(col, c, ModeHybrid, &a).ndcg)
				}
				t.Log(line)
			}
		}
	}
	t.Log("| collection | embedder | keyword nDCG@10 / recall@10 | semantic | hybrid (default) |\n" + strings.Join(table, "\n"))
}

// checkNonsense asks made-up words in every mode and fails if any finds
// something; with report, it logs the best cosine each reaches without the
// floor (the figures the floor is calibrated on).
func (k *testKB) checkNonsense(col string, c *beir, emb embed.Embedder, report bool) {
	k.t.Helper()
	for _, w := range nonsenseWords(100) {
		for _, mode := range []string{ModeKeyword, ModeSemantic, ModeHybrid} {
			if res := k.search(col, w, mode, 10); len(res) > 0 {
				k.t.Errorf("%s, %s: made-up word %q found %d chunks in %s mode (first score %.3f)", c.name, emb.Name(), w, len(res), mode, res[0].Score)
			}
		}
	}
	if !report {
		return
	}
	var best []float64
	for _, w := range nonsenseWords(1000) {
		_, hits, err := k.svc.semanticSearch(context.Background(), SearchRequest{CollectionID: col, Query: w}, 1)
		if err != nil {
			k.t.Fatal(err)
		}
		if len(hits) > 0 {
			best = append(best, float64(hits[0].Score))
		}
	}
	slices.Sort(best)
	if len(best) > 0 {
		k.t.Logf("%s %s: best cosine of %d made-up words: median %.3f, p99 %.3f, max %.3f (floor %.2f)", c.name, emb.Name(), len(best),
			best[len(best)/2], best[len(best)*99/100], best[len(best)-1], k.svc.SearchTuning().MinSimilarity)
	}
}
