package kb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
)

// A source whose processing is cut by shutdown is given back and finished
// by the next start on the same file.
func TestRestartWhileProcessing(t *testing.T) {
	path := dbtest.Path(t, "agentd.db")
	emb := newTestEmbedder(t, 64)
	var org, col string
	t.Run("first run stops mid-processing", func(t *testing.T) {
		db := openDB(t, path)
		org = newOrg(t, db, "default")
		cfg := testCfg(emb)
		cfg.EmbedBatch = 1
		k, stop := startKB(t, db, org, cfg)
		col = k.collection("docs")
		// Several chunks, one per embedding call: shutdown lands between calls.
		content := "SLOW-EMBED text about turbines.\n\n" + strings.Repeat("Compressor blades and stator vanes of the turbine. ", 200)
		k.upsert(col, "slow", "t", content)
		select {
		case <-emb.started:
		case <-time.After(10 * time.Second):
			t.Fatal("worker never started embedding")
		}
		// Stop while the embedding call is in hand.
		stop()
	})
	db, err := storage.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	srcs, _, err := db.KB.ListSources(context.Background(), col, kbstore.SourceFilter{Limit: 10})
	db.Close()
	if err != nil || len(srcs) != 1 || srcs[0].Status != "pending" {
		t.Fatalf("after shutdown: %+v %v (want pending: unfinished work given back)", srcs, err)
	}
	emb.delay = 0
	k, _ := startKB(t, openDB(t, path), org, testCfg(emb))
	if s := k.waitProcessed(col)[0]; s.Status != "completed" || s.ChunkCount < 2 {
		t.Fatalf("after restart: %+v", s)
	}
}

// A process that died holding a claim does not block the source: while
// its lease lives nobody else takes it, once it expires the next start
// picks it up.
func TestCrashedClaimIsTakenOver(t *testing.T) {
	ctx := context.Background()
	path := dbtest.Path(t, "agentd.db")
	var org, col string
	t.Run("setup", func(t *testing.T) {
		db := openDB(t, path)
		org = newOrg(t, db, "default")
		k, _ := startKB(t, db, org, testCfg(newTestEmbedder(t, 64)))
		col = k.collection("docs")
	})
	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.KB.UpsertSource(ctx, org, col, kbstore.SourceInput{ExternalID: "x", Title: "t", Content: "orphaned work"}); err != nil {
		t.Fatal(err)
	}
	if jobs, _, err := db.KB.ClaimKBSources(ctx, "dead-process", 300*time.Millisecond, 1, 0); err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	if jobs, _, err := db.KB.ClaimKBSources(ctx, "live-process", time.Minute, 1, 0); err != nil || len(jobs) != 0 {
		t.Fatal("a live lease was taken over", err)
	}
	db.Close()
	// The dead process's lease (300 ms) runs out on the clock: no event
	// marks it, and the restarted worker (wake-only) claims once at start.
	time.Sleep(400 * time.Millisecond) // the lease's span on the store's clock: no event marks its end
	k, _ := startKB(t, openDB(t, path), org, testCfg(newTestEmbedder(t, 64)))
	if s := k.waitProcessed(col)[0]; s.Status != "completed" {
		t.Fatalf("orphaned source: %+v", s)
	}
}

// A newer write of a source while its older content is being embedded
// wins: the old revision's chunks never land over the new ones.
func TestNewerWriteWins(t *testing.T) {
	emb := newTestEmbedder(t, 64)
	cfg := testCfg(emb)
	cfg.Workers = 2
	k := newKB(t, cfg)
	col := k.collection("docs")
	k.upsert(col, "doc", "t", "old revision SLOW-EMBED zeppelin")
	select {
	case <-emb.started:
	case <-time.After(10 * time.Second):
		t.Fatal("worker never started embedding")
	}
	k.upsert(col, "doc", "t", "new revision about gliders")
	k.waitProcessed(col)
	select {
	case <-emb.returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow old call never returned")
	}
	// Its write comes right after: give it 200 ms to show up, if it would.
	stale := func() bool {
		srcs := k.sources(col)
		return len(srcs) != 1 || srcs[0].Status != "completed" || len(k.search(col, "zeppelin", ModeKeyword, 0)) > 0
	}
	if testkit.Within(200*time.Millisecond, stale) {
		t.Fatalf("the old revision landed: sources %+v", k.sources(col))
	}
	for _, mode := range []string{ModeKeyword, ModeSemantic} {
		res := k.search(col, "zeppelin gliders", mode, 0)
		if len(res) != 1 || !strings.Contains(res[0].Content, "gliders") {
			t.Fatalf("%s search sees %+v, want only the new revision", mode, res)
		}
	}
}

// Changing the embedder queues every source again at the next start, and
// semantic search answers in the new vector space once re-embedded;
// Reindex does the same from the CLI.
func TestEmbedderChangeReindexes(t *testing.T) {
	path := dbtest.Path(t, "agentd.db")
	var org, col string
	t.Run("index with 64 dims", func(t *testing.T) {
		db := openDB(t, path)
		org = newOrg(t, db, "default")
		k, _ := startKB(t, db, org, testCfg(newTestEmbedder(t, 64)))
		col = k.collection("docs")
		k.upsert(col, "a", "Wings", "swept wings at transonic speed")
		k.upsert(col, "b", "Heat", "heat transfer in hypersonic flow")
		k.waitProcessed(col)
	})
	db := openDB(t, path)
	k, _ := startKB(t, db, org, testCfg(newTestEmbedder(t, 128)))
	k.waitProcessed(col)
	m, err := db.Vectors.VectorSpaceModel(context.Background(), kbstore.KBSpace(col))
	if err != nil || m.Dims != 128 {
		t.Fatalf("space model %+v %v", m, err)
	}
	res := k.search(col, "hypersonic heat", ModeSemantic, 0)
	if len(res) == 0 || res[0].ExternalID != "b" {
		t.Fatalf("semantic after re-embedding: %+v", res)
	}
	// The CLI path: a forced reindex re-embeds every source in-process.
	queued, done, err := reindex(context.Background(), db, Config{TestEmbedder: newTestEmbedder(t, 128)}, ReindexOptions{CollectionID: col, Force: true})
	if err != nil || queued != 2 || done < 1 {
		t.Fatalf("reindex queued %d done %d err %v", queued, done, err)
	}
	k.waitProcessed(col)
}
