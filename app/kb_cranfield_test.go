package app

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cranfieldDir is the public test collection (see its README for the
// nDCG@10 recipe and the plain BM25 baseline of 0.369).
var cranLimit = 30 // chunks asked per query: a long document may fill several of the top 10

var cranfieldDir = filepath.Join("..", "..", "shared", "eval", "cranfield")

type cranDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// ndcgAt10 is the README's recipe: linear gains, IDCG from the query's own
// judgements.
func ndcgAt10(ranked []string, judged map[string]int) float64 {
	dcg := 0.0
	for r, id := range ranked[:min(10, len(ranked))] {
		dcg += float64(judged[id]) / math.Log2(float64(r+2))
	}
	var gains []int
	for _, g := range judged {
		gains = append(gains, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(gains)))
	idcg := 0.0
	for r, g := range gains[:min(10, len(gains))] {
		idcg += float64(g) / math.Log2(float64(r+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// TestKBCranfield loads Cranfield through the HTTP API (batches of 50,
// waits for processing), runs the 225 queries through POST
// /api/v1/kb/search (30 chunks per query and mode), ranks documents by their
// best chunk (the first 10 distinct ones) and reports nDCG@10. Keyword mode must reach the plain BM25
// baseline (0.369).
//
//	go test ./app -run KBCranfield -v
func TestKBCranfield(t *testing.T) {
	if testing.Short() {
		t.Skip("Cranfield evaluation skipped under -short")
	}
	if _, err := os.Stat(filepath.Join(cranfieldDir, "corpus.jsonl")); err != nil {
		t.Skip("Cranfield collection not found at ", cranfieldDir)
	}
	docs := readJSONL[cranDoc](t, filepath.Join(cranfieldDir, "corpus.jsonl"))
	queries := readJSONL[struct {
		ID   string `json:"_id"`
		Text string `json:"text"`
	}](t, filepath.Join(cranfieldDir, "queries.jsonl"))
	qrels := map[string]map[string]int{}
	qf, err := os.ReadFile(filepath.Join(cranfieldDir, "qrels.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(qf)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) != 3 {
			continue
		}
		g, _ := strconv.Atoi(f[2])
		if qrels[f[0]] == nil {
			qrels[f[0]] = map[string]int{}
		}
		qrels[f[0]][f[1]] = g
	}

	e := newTestEnv(t, func(c *Config) { c.Log = discardLogger(); c.KB.PollInterval = -1 })
	col := e.createCollection(e.key, "cranfield")
	start := time.Now()
	for s := 0; s < len(docs); s += 50 {
		var items []any
		for _, d := range docs[s:min(len(docs), s+50)] {
			items = append(items, map[string]any{"externalId": d.ID, "title": d.Title, "content": d.Text})
		}
		if code, _, b := e.do("POST", "/api/v1/kb/sources/batch", e.key, map[string]any{"collectionId": col, "sources": items}); code != 200 {
			t.Fatalf("batch: %d %s", code, b)
		}
	}
	for deadline := time.Now().Add(5 * time.Minute); ; {
		var l kbListResp
		e.doJSON("GET", "/api/v1/kb/sources?limit=1&status=completed&collectionId="+col, e.key, nil, &l)
		if l.Data.Pagination.Total == len(docs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d processed", l.Data.Pagination.Total, len(docs))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("loaded %d documents through the API in %v", len(docs), time.Since(start).Round(time.Millisecond))

	scores := map[string]float64{}
	for _, mode := range []string{kbModeKeyword, kbModeSemantic, kbModeHybrid} {
		sum, n := 0.0, 0
		for _, q := range queries {
			judged, ok := qrels[q.ID]
			if !ok {
				continue
			}
			res := e.search(e.key, map[string]any{"collectionId": col, "query": q.Text, "limit": cranLimit, "mode": mode})
			var ranked []string
			seen := map[string]bool{}
			for _, r := range res.Results { // a document ranks by its best chunk
				if !seen[r.ExternalID] {
					seen[r.ExternalID] = true
					ranked = append(ranked, r.ExternalID)
				}
			}
			if len(ranked) > 10 {
				ranked = ranked[:10]
			}
			sum += ndcgAt10(ranked, judged)
			n++
		}
		scores[mode] = sum / float64(n)
		t.Logf("Cranfield nDCG@10 %-8s %.4f (%d queries)", mode, scores[mode], n)
	}
	// The baseline is published to three decimals: 0.369.
	if scores[kbModeKeyword] < 0.3685 {
		t.Errorf("keyword nDCG@10 %.4f below plain BM25 (0.369)", scores[kbModeKeyword])
	}
	if scores[kbModeHybrid] <= 0.369 {
		t.Errorf("hybrid nDCG@10 %.4f does not beat plain BM25 (0.369)", scores[kbModeHybrid])
	}
}
