package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/storage"
)

// A source whose processing is cut by shutdown is given back and finished
// by the next start on the same file.
func TestKBRestartWhileProcessing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.db")
	emb := newTestEmbedder(t, 64)
	var key, col string
	t.Run("first run stops mid-processing", func(t *testing.T) {
		e := startTestEnv(t, path, kbOpts(emb), func(c *Config) { c.KB.EmbedBatch = 1 })
		key = e.key
		col = e.createCollection(key, "docs")
		// Several chunks, one per embedding call: shutdown lands between calls.
		content := "SLOW-EMBED text about turbines.\n\n" + strings.Repeat("Compressor blades and stator vanes of the turbine. ", 200)
		upsert(e, key, map[string]any{"collectionId": col, "externalId": "slow", "title": "t", "content": content})
		select {
		case <-emb.started:
		case <-time.After(10 * time.Second):
			t.Fatal("worker never started embedding")
		}
		// The subtest's cleanup now stops the server while the embedding call is in hand.
	})
	db, err := storage.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	srcs, _, err := db.ListSources(context.Background(), col, storage.SourceFilter{Limit: 10})
	db.Close()
	if err != nil || len(srcs) != 1 || srcs[0].Status != "pending" {
		t.Fatalf("after shutdown: %+v %v (want pending: unfinished work given back)", srcs, err)
	}
	emb.delay = 0
	e := startTestEnv(t, path, kbOpts(emb))
	l := e.waitProcessed(key, col)
	if s := l.Data.Sources[0]; s.Status != "completed" || s.ChunkCount < 2 {
		t.Fatalf("after restart: %+v", s)
	}
}

// A process that died holding a claim does not block the source: while
// its lease lives nobody else takes it, once it expires the next start
// picks it up.
func TestKBCrashedClaimIsTakenOver(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentd.db")
	var key, org, col string
	t.Run("setup", func(t *testing.T) {
		e := startTestEnv(t, path, kbOpts(newTestEmbedder(t, 64)))
		key, org = e.key, e.orgID
		col = e.createCollection(key, "docs")
	})
	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpsertSource(ctx, org, col, storage.SourceInput{ExternalID: "x", Title: "t", Content: "orphaned work"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimKBSource(ctx, "dead-process", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimKBSource(ctx, "live-process", time.Minute); err == nil {
		t.Fatal("a live lease was taken over")
	}
	db.Close()
	time.Sleep(400 * time.Millisecond)
	e := startTestEnv(t, path, kbOpts(newTestEmbedder(t, 64)))
	if l := e.waitProcessed(key, col); l.Data.Sources[0].Status != "completed" {
		t.Fatalf("orphaned source: %+v", l.Data.Sources[0])
	}
}

// A newer write of a source while its older content is being embedded
// wins: the old revision's chunks never land over the new ones.
func TestKBNewerWriteWins(t *testing.T) {
	emb := newTestEmbedder(t, 64)
	e := newTestEnv(t, kbOpts(emb), func(c *Config) { c.KB.Workers = 2 })
	col := e.createCollection(e.key, "docs")
	upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "doc", "title": "t", "content": "old revision SLOW-EMBED zeppelin"})
	select {
	case <-emb.started:
	case <-time.After(10 * time.Second):
		t.Fatal("worker never started embedding")
	}
	upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "doc", "title": "t", "content": "new revision about gliders"})
	e.waitProcessed(e.key, col)
	time.Sleep(emb.delay + 200*time.Millisecond) // the slow old call has returned and tried to write
	l := e.sources(e.key, col)
	if len(l.Data.Sources) != 1 || l.Data.Sources[0].Status != "completed" {
		t.Fatalf("sources %+v", l.Data.Sources)
	}
	for _, mode := range []string{"keyword", "semantic"} {
		res := e.search(e.key, map[string]any{"collectionId": col, "query": "zeppelin gliders", "mode": mode})
		if len(res.Results) != 1 || !strings.Contains(res.Results[0].Content, "gliders") {
			t.Fatalf("%s search sees %+v, want only the new revision", mode, res.Results)
		}
	}
}

// Changing the embedder queues every source again at the next start, and
// semantic search answers in the new vector space once re-embedded;
// Reindex does the same from the CLI.
func TestKBEmbedderChangeReindexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.db")
	var key, col string
	t.Run("index with 64 dims", func(t *testing.T) {
		e := startTestEnv(t, path, kbOpts(newTestEmbedder(t, 64)))
		key = e.key
		col = e.createCollection(key, "docs")
		upsert(e, key, map[string]any{"collectionId": col, "externalId": "a", "title": "Wings", "content": "swept wings at transonic speed"})
		upsert(e, key, map[string]any{"collectionId": col, "externalId": "b", "title": "Heat", "content": "heat transfer in hypersonic flow"})
		e.waitProcessed(key, col)
	})
	e := startTestEnv(t, path, kbOpts(newTestEmbedder(t, 128)))
	e.waitProcessed(key, col)
	m, err := e.db.VectorSpaceModel(context.Background(), storage.KBSpace(col))
	if err != nil || m.Dims != 128 {
		t.Fatalf("space model %+v %v", m, err)
	}
	res := e.search(key, map[string]any{"collectionId": col, "query": "hypersonic heat", "mode": "semantic"})
	if len(res.Results) == 0 || res.Results[0].ExternalID != "b" {
		t.Fatalf("semantic after re-embedding: %+v", res.Results)
	}
	// The CLI path: a forced reindex re-embeds every source in-process.
	queued, done, err := Reindex(context.Background(), e.db, KBConfig{TestEmbedder: newTestEmbedder(t, 128)}, col, true, nil, nil)
	if err != nil || queued != 2 || done < 1 {
		t.Fatalf("reindex queued %d done %d err %v", queued, done, err)
	}
	e.waitProcessed(key, col)
}
