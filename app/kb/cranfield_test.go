package kb

import (
	"bufio"
	"cmp"
	"context"
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

var cranLimit = 30 // chunks asked per query: a long document may fill several of the top 10

// cranfieldDir is the public test collection (see its README for the
// nDCG@10 recipe and the plain BM25 baseline of 0.369); AGENTD_CRANFIELD_DIR
// points elsewhere (a git worktree outside the usual layout).
var cranfieldDir = cmp.Or(os.Getenv("AGENTD_CRANFIELD_DIR"), filepath.Join("..", "..", "..", "shared", "eval", "cranfield"))

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

// TestCranfield loads Cranfield through the batch use case (batches of
// 50, waits for processing), runs the 225 queries through Search (30 chunks
// per query and mode), ranks documents by their best chunk (the first 10
// distinct ones) and reports nDCG@10. Keyword mode must reach the plain
// BM25 baseline (0.369).
//
//	go test ./app/kb -run Cranfield -v
func TestCranfield(t *testing.T) {
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

	k := newKB(t, Config{PollInterval: -1})
	ctx := context.Background()
	col := k.collection("cranfield")
	start := time.Now()
	for s := 0; s < len(docs); s += 50 {
		in := BatchInput{CollectionID: col}
		for _, d := range docs[s:min(len(docs), s+50)] {
			item, _ := json.Marshal(map[string]any{"externalId": d.ID, "title": d.Title, "content": d.Text})
			in.Sources = append(in.Sources, item)
		}
		if res, err := k.svc.UpsertBatch(ctx, k.org, in); err != nil || res.Summary.Failed > 0 {
			t.Fatalf("batch: %v %+v", err, res.Summary)
		}
	}
	for deadline := time.Now().Add(5 * time.Minute); ; {
		_, total, err := k.svc.ListSources(ctx, k.org, SourceQuery{CollectionID: col, Status: "completed", Page: Page{Limit: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if total == len(docs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d processed", total, len(docs))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("loaded %d documents in %v", len(docs), time.Since(start).Round(time.Millisecond))

	scores := map[string]float64{}
	for _, mode := range []string{ModeKeyword, ModeSemantic, ModeHybrid} {
		sum, n := 0.0, 0
		for _, q := range queries {
			judged, ok := qrels[q.ID]
			if !ok {
				continue
			}
			var ranked []string
			seen := map[string]bool{}
			for _, r := range k.search(col, q.Text, mode, cranLimit) { // a document ranks by its best chunk
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
	if scores[ModeKeyword] < 0.3685 {
		t.Errorf("keyword nDCG@10 %.4f below plain BM25 (0.369)", scores[ModeKeyword])
	}
	if scores[ModeHybrid] <= 0.369 {
		t.Errorf("hybrid nDCG@10 %.4f does not beat plain BM25 (0.369)", scores[ModeHybrid])
	}
}
