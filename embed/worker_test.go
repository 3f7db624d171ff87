package embed

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/search"
)

// benchMarkdown builds a deterministic Markdown document of about size
// bytes: nested headings, paragraphs, lists, fenced code and tables.
func benchMarkdown(size int) string {
	words := strings.Fields("the wing boundary layer pressure gradient flow separation shock wave laminar turbulent " +
		"heat transfer nozzle supersonic subsonic drag lift coefficient model tunnel test measured theory " +
		"install configure server client request response token cache index query vector search result")
	var b strings.Builder
	for s := 0; b.Len() < size; s++ {
		fmt.Fprintf(&b, "# Part %d\n\n", s)
		for sub := 0; sub < 4 && b.Len() < size; sub++ {
			fmt.Fprintf(&b, "## Section %d.%d\n\n", s, sub)
			for p := range 3 {
				for w := range 60 {
					b.WriteString(words[(s*131+sub*17+p*7+w*w)%len(words)])
					b.WriteByte(' ')
				}
				b.WriteString("\n\n")
			}
			fmt.Fprintf(&b, "- item one of %d\n- item two\n- item three\n\n", sub)
			b.WriteString("```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n")
			b.WriteString("| key | value |\n|---|---|\n| a | 1 |\n| b | 2 |\n\n")
		}
	}
	return b.String()[:size]
}

func newBenchWorker(tb testing.TB) (*storage.Stores, *Worker, string, string) {
	ctx := context.Background()
	db := storetest.Open(tb, dbtest.Path(tb, "w.db"))
	org, err := db.Orgs.CreateOrg(ctx, "o")
	if err != nil {
		tb.Fatal(err)
	}
	col, err := db.KB.CreateCollection(ctx, org.ID, "c", "")
	if err != nil {
		tb.Fatal(err)
	}
	emb, err := NewBuiltin(DefaultBuiltinDims)
	if err != nil {
		tb.Fatal(err)
	}
	ch, err := NewChunker(DefaultChunkTokens, DefaultOverlap)
	if err != nil {
		tb.Fatal(err)
	}
	return db, NewWorker(db.KB, emb, ch, WorkerConfig{Workers: 1}), org.ID, col.ID
}

// The worker stores what it processed: chunks completed, searchable by
// keyword and by vector, and a failed embedder leaves the source failed.
func TestWorkerProcessesSource(t *testing.T) {
	ctx := context.Background()
	db, w, org, col := newBenchWorker(t)
	md := benchMarkdown(20_000)
	if _, err := db.KB.UpsertSource(ctx, org, col, kbstore.SourceInput{ExternalID: "doc", Title: "Doc", Content: md}); err != nil {
		t.Fatal(err)
	}
	n, err := w.Drain(ctx)
	if err != nil || n != 1 {
		t.Fatalf("drain %d %v", n, err)
	}
	srcs, _, err := db.KB.ListSources(ctx, col, kbstore.SourceFilter{Limit: 10})
	if err != nil || srcs[0].Status != "completed" || srcs[0].ChunkCount < 5 {
		t.Fatalf("%+v %v", srcs, err)
	}
	hits, err := search.NewTextIndex(db.Vectors, db.KB.LoadText).Search(ctx, kbstore.KBSpace(col), "supersonic nozzle", 5, nil)
	if err != nil || len(hits) == 0 {
		t.Fatalf("keyword %v %v", hits, err)
	}
	idx := search.NewVectorIndex(db.Vectors)
	if n, err := idx.Len(ctx, kbstore.KBSpace(col)); err != nil || n != srcs[0].ChunkCount {
		t.Fatalf("vectors %d, chunks %d, err %v", n, srcs[0].ChunkCount, err)
	}
}

// BenchmarkIngest500KB is chunk + embed (builtin, 1,024 dims) + store of a
// 500 KB Markdown source, one transaction, as the worker does it (the
// upsert that queues it again each round is included).
//
//	go test ./embed -run '^$' -bench Ingest500KB -benchtime 10x -count 3
func BenchmarkIngest500KB(b *testing.B) {
	ctx := context.Background()
	db, w, org, col := newBenchWorker(b)
	md := benchMarkdown(512_000)
	i := 0
	for b.Loop() {
		// Alternate two revisions so every round is real new content.
		content := md[:len(md)-1] + string(rune('a'+i%2))
		i++
		if _, err := db.KB.UpsertSource(ctx, org, col, kbstore.SourceInput{ExternalID: "doc", Title: "Doc", Content: content}); err != nil {
			b.Fatal(err)
		}
		if did, err := w.ProcessBatch(ctx); err != nil || did != 1 {
			b.Fatal(did, err)
		}
	}
	srcs, _, _ := db.KB.ListSources(ctx, col, kbstore.SourceFilter{Limit: 1})
	b.ReportMetric(float64(srcs[0].ChunkCount), "chunks")
}
