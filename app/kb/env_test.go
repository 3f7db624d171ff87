package kb

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
)

// testEmbedder is the built-in embedder that, for a text holding
// "SLOW-EMBED", signals started, takes delay first (unless the call is
// cancelled) and signals returned: a slow embedding service, not a fake of
// our storage.
type testEmbedder struct {
	*embed.Builtin
	started, returned chan struct{}
	delay             time.Duration
}

func newTestEmbedder(t testing.TB, dims int) *testEmbedder {
	b, err := embed.NewBuiltin(dims)
	if err != nil {
		t.Fatal(err)
	}
	return &testEmbedder{Builtin: b, started: make(chan struct{}, 16), returned: make(chan struct{}, 16), delay: 400 * time.Millisecond}
}

func (e *testEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "SLOW-EMBED") {
			select {
			case e.started <- struct{}{}:
			default:
			}
			select {
			case <-time.After(e.delay):
			case <-ctx.Done():
			}
			select {
			case e.returned <- struct{}{}:
			default:
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	return e.Builtin.Embed(ctx, texts)
}

// testCfg is a wake-only worker with the given embedder.
func testCfg(emb embed.Embedder) Config { return Config{TestEmbedder: emb, PollInterval: -1} }

// openDB opens (or creates) the database file at path, closed at cleanup.
func openDB(t testing.TB, path string) *storage.Stores {
	t.Helper()
	db := storetest.Open(t, path)
	return db
}

// testKB is a started knowledge base on a database, like serve runs it.
type testKB struct {
	t   testing.TB
	db  *storage.Stores
	svc *Service
	org string
}

// startKB opens the service on db and runs its worker and warm-up until
// stop (or the test's cleanup).
func startKB(t testing.TB, db *storage.Stores, org string, cfg Config) (*testKB, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := Open(ctx, deps(db), cfg, nil)
	if err != nil {
		cancel()
		t.Fatalf("open: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { svc.Warm(ctx) })
	wg.Go(func() { svc.Run(ctx) })
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return &testKB{t: t, db: db, svc: svc, org: org}, stop
}

// newKB is a started knowledge base on a fresh database with one
// organization.
func newKB(t testing.TB, cfg Config) *testKB {
	t.Helper()
	db := openDB(t, dbtest.Path(t, "agentd.db"))
	k, _ := startKB(t, db, newOrg(t, db, "default"), cfg)
	return k
}

// newOrg creates an organization and returns its id.
func newOrg(t testing.TB, db *storage.Stores, name string) string {
	t.Helper()
	o, err := db.Orgs.CreateOrg(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

// collection creates a collection and returns its id.
func (k *testKB) collection(name string) string {
	k.t.Helper()
	c, err := k.svc.CreateCollection(context.Background(), k.org, name, "")
	if err != nil {
		k.t.Fatal(err)
	}
	return c.ID
}

// upsert writes one source.
func (k *testKB) upsert(col, externalID, title, content string) UpsertResult {
	k.t.Helper()
	res, err := k.svc.UpsertSource(context.Background(), k.org, SourceInput{CollectionID: col,
		ExternalID: &externalID, Title: &title, Content: &content})
	if err != nil {
		k.t.Fatalf("upsert %s: %v", externalID, err)
	}
	return res
}

// sources lists a collection's sources (first 100).
func (k *testKB) sources(col string) []kbstore.Source {
	k.t.Helper()
	srcs, _, err := k.svc.ListSources(context.Background(), k.org, SourceQuery{CollectionID: col, Page: Page{Limit: 100}})
	if err != nil {
		k.t.Fatalf("list sources: %v", err)
	}
	return srcs
}

// waitProcessed polls the list until no source is pending or processing.
func (k *testKB) waitProcessed(col string) []kbstore.Source {
	k.t.Helper()
	var srcs []kbstore.Source
	testkit.Eventually(k.t, 30*time.Second, func() bool {
		srcs = k.sources(col)
		for _, s := range srcs {
			if s.Status == "pending" || s.Status == "processing" {
				return false
			}
		}
		return true
	}, "sources still processing: %+v", &srcs)
	return srcs
}

// search runs a search that must succeed.
func (k *testKB) search(col, query, mode string, limit int) []Result {
	k.t.Helper()
	in := SearchInput{CollectionID: col, Query: &query, Mode: mode}
	if limit > 0 {
		in.Limit = &limit
	}
	res, err := k.svc.Search(context.Background(), k.org, in)
	if err != nil {
		k.t.Fatalf("search %q %s: %v", query, mode, err)
	}
	return res
}

// deps are the knowledge base's stores in db, as app/features passes them.
func deps(db *storage.Stores) Deps { return Deps{KB: db.KB, Vectors: db.Vectors} }

// reindex is Reindex on a service with cfg over db, as `agentd reindex`
// opens it.
func reindex(ctx context.Context, db *storage.Stores, cfg Config, opt ReindexOptions) (queued, done int, err error) {
	s, err := New(deps(db), cfg, nil)
	if err != nil {
		return 0, 0, err
	}
	return s.Reindex(ctx, opt)
}
