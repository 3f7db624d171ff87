package kb

import (
	"bufio"
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

	"github.com/agentd/agentd/internal/testkit"
)

// beir is a test collection in the BEIR layout (corpus.jsonl,
// queries.jsonl, qrels.tsv), as kept in ../shared/eval/<name>.
type beir struct {
	name    string
	docs    []beirDoc
	queries []beirQuery               // only the judged ones, in file order
	qrels   map[string]map[string]int // query id -> document id -> gain
}

type beirDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

type beirQuery struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// evalRoot finds the shared eval folder: AGENTD_EVAL_ROOT, else the first
// "shared/eval" above this package (the main checkout and git worktrees sit
// at different depths).
func evalRoot() string {
	if d := os.Getenv("AGENTD_EVAL_ROOT"); d != "" {
		return d
	}
	dir, _ := filepath.Abs(".")
	for range 6 {
		dir = filepath.Dir(dir)
		if st, err := os.Stat(filepath.Join(dir, "shared", "eval")); err == nil && st.IsDir() {
			return filepath.Join(dir, "shared", "eval")
		}
	}
	return ""
}

// evalCollections lists the collections to evaluate: AGENTD_EVAL (a
// comma-separated list of names under the root or paths), else every
// folder of the root that holds a corpus.jsonl.
func evalCollections() []string {
	root := evalRoot()
	if v := os.Getenv("AGENTD_EVAL"); v != "" {
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if !filepath.IsAbs(p) && root != "" {
				if _, err := os.Stat(filepath.Join(root, p)); err == nil {
					p = filepath.Join(root, p)
				}
			}
			out = append(out, p)
		}
		return out
	}
	if root == "" {
		return nil
	}
	ents, _ := os.ReadDir(root)
	var out []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "corpus.jsonl")); err == nil {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	return out
}

func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readBEIR reads a collection folder.
func readBEIR(t testing.TB, dir string) *beir {
	t.Helper()
	c := &beir{name: filepath.Base(dir), qrels: map[string]map[string]int{}}
	c.docs = readJSONL[beirDoc](t, filepath.Join(dir, "corpus.jsonl"))
	qf, err := os.ReadFile(filepath.Join(dir, "qrels.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(qf)), "\n") {
		f := strings.Split(strings.TrimRight(line, "\r"), "\t")
		if i == 0 || len(f) != 3 {
			continue
		}
		g, _ := strconv.Atoi(f[2])
		if g <= 0 {
			continue
		}
		if c.qrels[f[0]] == nil {
			c.qrels[f[0]] = map[string]int{}
		}
		c.qrels[f[0]][f[1]] = g
	}
	for _, q := range readJSONL[beirQuery](t, filepath.Join(dir, "queries.jsonl")) {
		if c.qrels[q.ID] != nil {
			c.queries = append(c.queries, q)
		}
	}
	return c
}

// load writes the collection's documents into col through the batch use
// case (50 per batch, as a client would) and waits until the worker has
// processed them all.
func (k *testKB) load(col string, c *beir) {
	k.t.Helper()
	ctx := context.Background()
	for s := 0; s < len(c.docs); s += 50 {
		in := BatchInput{CollectionID: col}
		for _, d := range c.docs[s:min(len(c.docs), s+50)] {
			item, _ := json.Marshal(map[string]any{"externalId": d.ID, "title": d.Title, "content": d.Text})
			in.Sources = append(in.Sources, item)
		}
		if res, err := k.svc.UpsertBatch(ctx, k.org, in); err != nil || res.Summary.Failed > 0 {
			k.t.Fatalf("batch: %v %+v", err, res.Summary)
		}
	}
	total := 0
	if !testkit.Within(10*time.Minute, func() bool {
		var err error
		if _, total, err = k.svc.ListSources(ctx, k.org, SourceQuery{CollectionID: col, Status: "completed", Page: Page{Limit: 1}}); err != nil {
			k.t.Fatal(err)
		}
		return total == len(c.docs)
	}) {
		k.t.Fatalf("%d of %d processed", total, len(c.docs))
	}
}

// evalChunks is how many chunks a query asks for: a long document may
// fill several of the top 10, and a document ranks by its best chunk.
const evalChunks = 30

// topDocs turns ranked chunks into the first 10 distinct documents.
func topDocs(rs []Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.ExternalID] {
			seen[r.ExternalID] = true
			out = append(out, r.ExternalID)
			if len(out) == 10 {
				break
			}
		}
	}
	return out
}

// ndcgAt10 is the collections' README recipe: linear gains, IDCG from the
// query's own judgements.
func ndcgAt10(ranked []string, judged map[string]int) float64 {
	dcg := 0.0
	for r, id := range ranked[:min(10, len(ranked))] {
		dcg += float64(judged[id]) / math.Log2(float64(r+2))
	}
	gains := make([]int, 0, len(judged))
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

// recallAt10 is the share of the query's relevant documents in the top 10.
func recallAt10(ranked []string, judged map[string]int) float64 {
	if len(judged) == 0 {
		return 0
	}
	n := 0
	for _, id := range ranked[:min(10, len(ranked))] {
		if judged[id] > 0 {
			n++
		}
	}
	return float64(n) / float64(len(judged))
}
