package kb

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/storage/search"
)

// rerankServer is a scripted /rerank service (the shape TEI, Infinity,
// Jina, Cohere and llama.cpp share) scoring with score; delay slows it.
func rerankServer(t testing.TB, delay time.Duration, score func(query string, docs []string) []float64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/rerank" {
			http.NotFound(w, r)
			return
		}
		var in struct {
			Model     string   `json:"model"`
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Model == "" || in.TopN != len(in.Documents) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		var out struct {
			Results []map[string]any `json:"results"`
		}
		for i, s := range score(in.Query, in.Documents) {
			out.Results = append(out.Results, map[string]any{"index": i, "relevance_score": s})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func httpReranker(srv *httptest.Server) embed.Reranker {
	return &embed.HTTPReranker{URL: srv.URL + "/v1", Model: "test-reranker"}
}

func TestRerankerReordersAndDeadOneIsReported(t *testing.T) {
	// The scripted reranker prefers documents that mention "Zurich".
	srv := rerankServer(t, 0, func(q string, docs []string) []float64 {
		out := make([]float64, len(docs))
		for i, d := range docs {
			if strings.Contains(d, "Zurich") {
				out[i] = 1
			}
		}
		return out
	})
	cfg := testCfg(newTestEmbedder(t, 64))
	cfg.TestReranker = httpReranker(srv)
	k := newKB(t, cfg)
	col := k.collection("offices")
	k.upsert(col, "a", "Office hours Geneva", "Office hours: the office opens at 8.")
	k.upsert(col, "b", "Office hours Bern", "Office hours: office hours office hours, open at 9.")
	k.upsert(col, "c", "Zurich", "Office in Zurich, hours by appointment.")
	k.waitProcessed(col)
	q := "office hours"
	res, info, err := k.svc.SearchInfo(context.Background(), k.org, SearchInput{CollectionID: col, Query: &q})
	if err != nil || info == nil || !info.Applied || len(res) == 0 || res[0].ExternalID != "c" {
		t.Fatalf("reranked: %+v %+v %v", res, info, err)
	}
	plain := k.search(col, q, ModeKeyword, 5)
	if plain[0].ExternalID == "c" {
		t.Fatal("the keyword order already puts c first: the test shows nothing")
	}
	// A reranker that is down, or too slow, leaves the hybrid order and says so.
	srv.Close()
	res2, info2, err := k.svc.SearchInfo(context.Background(), k.org, SearchInput{CollectionID: col, Query: &q})
	if err != nil || info2 == nil || info2.Applied || !strings.Contains(info2.Skipped, "reranker unavailable") || len(res2) == 0 {
		t.Fatalf("dead reranker: %+v %+v %v", res2, info2, err)
	}
	slow := rerankServer(t, 3*time.Second, func(q string, docs []string) []float64 { return make([]float64, len(docs)) })
	k.svc.rerank = httpReranker(slow)
	start := time.Now()
	_, info3, err := k.svc.SearchInfo(context.Background(), k.org, SearchInput{CollectionID: col, Query: &q})
	if err != nil || info3.Applied || !strings.Contains(info3.Skipped, "did not answer within") || time.Since(start) > 2500*time.Millisecond {
		t.Fatalf("slow reranker: %+v %v after %v", info3, err, time.Since(start))
	}
}

// lexicalScores is a lexical reranker: BM25 of the query over the
// candidates alone (IDF from them), on agentd's own stemmed words.
func lexicalScores(q string, docs []string) []float64 {
	var tok search.Tokenizer
	qt := tok.ContentTokens(q, nil)
	df := map[string]int{}
	toks := make([][]string, len(docs))
	avg := 0.0
	for i, d := range docs {
		toks[i] = tok.Tokens(d, nil)
		avg += float64(len(toks[i]))
		seen := map[string]bool{}
		for _, w := range toks[i] {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	avg /= float64(max(len(docs), 1))
	out := make([]float64, len(docs))
	for i := range docs {
		tf := map[string]int{}
		for _, w := range toks[i] {
			tf[w]++
		}
		for _, w := range qt {
			if tf[w] == 0 {
				continue
			}
			idf := math.Log(1 + (float64(len(docs))-float64(df[w])+0.5)/(float64(df[w])+0.5))
			f := float64(tf[w])
			out[i] += idf * f * 2.2 / (f + 1.2*(0.25+0.75*float64(len(toks[i]))/avg))
		}
	}
	return out
}

// crossEncoder is the stand-in for a real reranking model, as the
// synthetic embedder stands in for an embedding model: it knows which
// document a passage comes from (by its 6-word shingles) and scores the
// judged gain plus as much noise (seeded per query and passage), so it is
// right about a relevant passage against an irrelevant one about two times
// in three. It tests that reordering passes a better judgement through; it
// cannot tell how good a real model is.
func crossEncoder(c *beir) func(string, []string) []float64 {
	shingles := map[string]string{}
	for _, d := range c.docs {
		w := strings.Fields(strings.ToLower(d.Text))
		for i := 0; i+6 <= len(w); i++ {
			shingles[strings.Join(w[i:i+6], " ")] = d.ID
		}
	}
	gains := map[string]map[string]int{}
	for _, q := range c.queries {
		gains[q.Text] = c.qrels[q.ID]
	}
	return func(q string, docs []string) []float64 {
		out := make([]float64, len(docs))
		for i, d := range docs {
			_, body, _ := strings.Cut(d, "\n")
			w := strings.Fields(strings.ToLower(body))
			doc := ""
			for j := 0; j+6 <= len(w) && doc == ""; j++ {
				doc = shingles[strings.Join(w[j:j+6], " ")]
			}
			g := 0.0
			if gains[q][doc] > 0 {
				g = 1
			}
			h := fnv.New64a()
			h.Write([]byte(q + "\x00" + d))
			out[i] = g + 1.5*float64(h.Sum64()%1000)/1000
		}
		return out
	}
}

// TestRerankQuality reports nDCG@10 of hybrid search without and with a
// reranker on every collection of the shared eval folder: a lexical
// reranker served over the /rerank API (the HTTP path as a real reranker
// takes it).
//
//	AGENTD_EVAL_RERANK=1 go test ./app/kb -run RerankQuality -v
//
// It loads every collection once more (a minute and a half here), so the
// README's figures come from that command rather than every test run;
// TestRerankerReordersAndDeadOneIsReported covers the behaviour each run.
func TestRerankQuality(t *testing.T) {
	if os.Getenv("AGENTD_EVAL_RERANK") == "" {
		t.Skip("set AGENTD_EVAL_RERANK=1 to evaluate search with rerankers")
	}
	dirs := evalCollections()
	if len(dirs) == 0 {
		t.Skip("no evaluation collections (set AGENTD_EVAL_ROOT to the folder of shared/eval)")
	}
	lexical := rerankServer(t, 0, lexicalScores)
	var table []string
	for _, dir := range dirs {
		c := readBEIR(t, dir)
		emb := newEvalEmbedder(t, "builtin", c)
		k := newKB(t, testCfg(emb))
		col := k.collection(c.name)
		k.load(col, c)
		plain := k.run(col, c, ModeHybrid, nil)
		k.svc.cfg.RerankTimeout = 10 * time.Second
		k.svc.rerank = httpReranker(lexical)
		lex := k.run(col, c, ModeHybrid, nil)
		k.svc.rerank = httpReranker(rerankServer(t, 0, crossEncoder(c)))
		ce := k.run(col, c, ModeHybrid, nil)
		row := fmt.Sprintf("| %s | %.4f / %.4f | %.4f / %.4f | %.4f / %.4f |", c.name, plain.ndcg, plain.recall,
			lex.ndcg, lex.recall, ce.ndcg, ce.recall)
		if ce.ndcg < plain.ndcg {
			t.Errorf("%s: the scripted cross-encoder lowers nDCG@10 %.4f -> %.4f: reranking loses what it is given", c.name, plain.ndcg, ce.ndcg)
		}
		t.Log(row)
		table = append(table, row)
	}
	t.Log("| collection | hybrid nDCG@10 / recall@10 | + lexical reranker | + scripted cross-encoder |\n" + strings.Join(table, "\n"))
}
