package kbstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/vectorstore"
)

// kbDB is a database with one collection of one organization.
type kbDB struct {
	*kbstore.Knowledge
	db  *storage.Stores
	t   *testing.T
	org string
	col string
}

func newKBDB(t *testing.T) *kbDB {
	t.Helper()
	ctx := context.Background()
	db := storetest.Fresh(t)
	o, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.KB.CreateCollection(ctx, o.ID, "docs", "")
	if err != nil {
		t.Fatal(err)
	}
	return &kbDB{Knowledge: db.KB, db: db, t: t, org: o.ID, col: c.ID}
}

// upsert writes a source and returns its id.
func (k *kbDB) upsert(ext, content string) string {
	k.t.Helper()
	r, err := k.UpsertSource(context.Background(), k.org, k.col, kbstore.SourceInput{ExternalID: ext, Title: ext, Content: content})
	if err != nil {
		k.t.Fatal(err)
	}
	return r.DocumentID
}

func (k *kbDB) source(ext string) kbstore.Source {
	k.t.Helper()
	ss, _, err := k.ListSources(context.Background(), k.col, kbstore.SourceFilter{ExternalID: ext, Limit: 1})
	if err != nil || len(ss) != 1 {
		k.t.Fatalf("source %s: %+v %v", ext, ss, err)
	}
	return ss[0]
}

var kbModel = vectorstore.VectorModel{Embedder: "test", Model: "m", Dims: 4}

func kbChunks(n int) []kbstore.KBChunk {
	out := make([]kbstore.KBChunk, n)
	for i := range out {
		out[i] = kbstore.KBChunk{Index: i, Content: "chunk", HeadingPath: []string{"H"}, Tokens: 1, Vec: []float32{1, 0, 0, float32(i)}}
	}
	return out
}

// Claims go oldest first, one owner at a time while the lease lives; an
// expired lease lets another worker take the source again.
func TestKBClaimsAndLeases(t *testing.T) {
	ctx := context.Background()
	k := newKBDB(t)
	if _, err := claimOne(k.db, "w1", time.Minute); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("claim with nothing queued: %v", err)
	}
	first := k.upsert("a", "alpha")
	k.upsert("b", "beta")
	j, err := claimOne(k.db, "w1", time.Minute)
	if err != nil || j.SourceID != first || j.Content != "alpha" || j.CollectionID != k.col {
		t.Fatalf("first claim: %+v %v", j, err)
	}
	j2, err := claimOne(k.db, "w2", time.Minute)
	if err != nil || j2.SourceID == first {
		t.Fatalf("second claim: %+v %v", j2, err)
	}
	if _, err := claimOne(k.db, "w3", time.Minute); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("both held, yet claimed: %v", err)
	}
	if n, err := k.KBBacklog(ctx, k.col); err != nil || n != 2 {
		t.Fatalf("backlog %d %v", n, err)
	}
	// w2's lease runs out (renewed into the past); w3 takes the source over
	// and w2's late work is refused.
	if err := k.RenewKBLeases(ctx, []kbstore.KBJob{j2}, "w2", -time.Second); err != nil {
		t.Fatal(err)
	}
	j3, err := claimOne(k.db, "w3", time.Minute)
	if err != nil || j3.SourceID != j2.SourceID {
		t.Fatalf("takeover: %+v %v", j3, err)
	}
	if err := completeOne(k.db, j2, "w2", kbModel, kbChunks(1)); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("late completion by the old owner: %v", err)
	}
	// Renewing someone else's claim does nothing.
	if err := k.RenewKBLeases(ctx, []kbstore.KBJob{j3}, "w2", -time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := claimOne(k.db, "w4", time.Minute); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a foreign renewal freed w3's claim: %v", err)
	}
	if err := completeOne(k.db, j3, "w3", kbModel, kbChunks(3)); err != nil {
		t.Fatal(err)
	}
	if s := k.source("b"); s.Status != "completed" || s.ChunkCount != 3 || s.Error != nil {
		t.Fatalf("completed source: %+v", s)
	}
	if n, _ := k.KBBacklog(ctx, ""); n != 1 {
		t.Fatalf("backlog after one completion: %d", n)
	}
}

// A write of new content while a worker processes the old one wins: the
// worker's completion or failure is refused, and the source is queued at
// its new revision.
func TestKBNewRevisionOvertakesTheWorker(t *testing.T) {
	ctx := context.Background()
	k := newKBDB(t)
	k.upsert("a", "v1")
	j, err := claimOne(k.db, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := k.UpsertSource(ctx, k.org, k.col, kbstore.SourceInput{ExternalID: "a", Title: "a", Content: "v1"}); err != nil || r.Status != kbstore.SourceUnchanged {
		t.Fatalf("same content: %+v %v", r, err)
	}
	if err := completeOne(k.db, j, "w1", kbModel, kbChunks(1)); err != nil {
		t.Fatalf("unchanged content must not overtake: %v", err)
	}
	k.upsert("a", "v2")
	j, err = claimOne(k.db, "w1", time.Minute)
	if err != nil || j.Content != "v2" {
		t.Fatalf("claim v2: %+v %v", j, err)
	}
	k.upsert("a", "v3")
	if err := completeOne(k.db, j, "w1", kbModel, kbChunks(2)); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("complete an overtaken job: %v", err)
	}
	if err := failOne(k.db, j, "w1", "boom"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("fail an overtaken job: %v", err)
	}
	if s := k.source("a"); s.Status != "processing" || s.ChunkCount != 1 {
		t.Fatalf("overtaken source: %+v", s)
	}
	j, err = claimOne(k.db, "w1", time.Minute)
	if err != nil || j.Content != "v3" {
		t.Fatalf("claim v3: %+v %v", j, err)
	}
	if err := failOne(k.db, j, "w1", "embedder down"); err != nil {
		t.Fatal(err)
	}
	if s := k.source("a"); s.Status != "failed" || s.Error == nil || *s.Error != "embedder down" {
		t.Fatalf("failed source: %+v", s)
	}
	// A deleted source refuses its job too.
	k.upsert("b", "beta")
	jb, err := claimOne(k.db, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.DeleteSources(ctx, k.col, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if err := completeOne(k.db, jb, "w1", kbModel, kbChunks(1)); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("complete a deleted source: %v", err)
	}
}

// Released and unfinished work goes back to pending; live claims stay.
func TestKBReleaseAndReset(t *testing.T) {
	ctx := context.Background()
	k := newKBDB(t)
	k.upsert("a", "alpha")
	k.upsert("b", "beta")
	ja, err := claimOne(k.db, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.ReleaseKBSources(ctx, []kbstore.KBJob{ja}, "w2"); err != nil {
		t.Fatal(err)
	}
	if s := k.source("a"); s.Status != "processing" {
		t.Fatalf("released by a non-owner: %+v", s)
	}
	if err := k.ReleaseKBSources(ctx, []kbstore.KBJob{ja}, "w1"); err != nil {
		t.Fatal(err)
	}
	if s := k.source("a"); s.Status != "pending" {
		t.Fatalf("released: %+v", s)
	}
	// "b" was never claimed (processing, no lease), "a" is claimed again
	// with a live lease: after a restart only "b" is unfinished work.
	if ja, err = claimOne(k.db, "w1", time.Minute); err != nil || ja.SourceID != k.source("a").ID {
		t.Fatalf("reclaim a: %+v %v", ja, err)
	}
	if n, err := k.ResetUnfinishedKB(ctx); err != nil || n != 1 {
		t.Fatalf("reset %d %v, want b only", n, err)
	}
	if a, b := k.source("a"), k.source("b"); a.Status != "processing" || b.Status != "pending" {
		t.Fatalf("after reset: a %s, b %s", a.Status, b.Status)
	}
}

// A new embedder model drops the collection's vectors and queues every
// source again; the same model queues nothing unless forced.
func TestSyncKBModel(t *testing.T) {
	ctx := context.Background()
	k := newKBDB(t)
	k.upsert("a", "alpha")
	j, err := claimOne(k.db, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := completeOne(k.db, j, "w1", kbModel, kbChunks(2)); err != nil {
		t.Fatal(err)
	}
	if n, err := k.SyncKBModel(ctx, kbModel, "", false); err != nil || n != 0 {
		t.Fatalf("same model: queued %d, %v", n, err)
	}
	if n, err := k.SyncKBModel(ctx, kbModel, k.col, true); err != nil || n != 1 || k.source("a").Status != "pending" {
		t.Fatalf("forced: queued %d, %v", n, err)
	}
	// The forced job's old claim is stale now.
	if err := completeOne(k.db, j, "w1", kbModel, kbChunks(2)); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("job from before the sync: %v", err)
	}
	j, err = claimOne(k.db, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := completeOne(k.db, j, "w1", kbModel, kbChunks(2)); err != nil {
		t.Fatal(err)
	}
	next := vectorstore.VectorModel{Embedder: "test", Model: "m2", Dims: 8}
	if n, err := k.SyncKBModel(ctx, next, "", false); err != nil || n != 1 || k.source("a").Status != "pending" {
		t.Fatalf("new model: queued %d, %v", n, err)
	}
}

// claimOne claims the oldest queued source; nothing queued is storage.ErrNotFound.
func claimOne(db *storage.Stores, owner string, lease time.Duration) (kbstore.KBJob, error) {
	jobs, _, err := db.KB.ClaimKBSources(context.Background(), owner, lease, 1, 0)
	if err == nil && len(jobs) == 0 {
		err = storage.ErrNotFound
	}
	if err != nil {
		return kbstore.KBJob{}, err
	}
	return jobs[0], nil
}

// completeOne completes one job; an overtaken job is storage.ErrConflict.
func completeOne(db *storage.Stores, j kbstore.KBJob, owner string, m vectorstore.VectorModel, chunks []kbstore.KBChunk) error {
	n, err := db.KB.CompleteKBSources(context.Background(), owner, m, []kbstore.KBDone{{Job: j, Chunks: chunks}})
	if err == nil && n == 0 {
		err = storage.ErrConflict
	}
	return err
}

// failOne fails one job for good; an overtaken job is storage.ErrConflict.
func failOne(db *storage.Stores, j kbstore.KBJob, owner, msg string) error {
	n, err := db.KB.FailKBSources(context.Background(), owner, []kbstore.KBFailure{{Job: j, Msg: msg}})
	if err == nil && n == 0 {
		err = storage.ErrConflict
	}
	return err
}

// A failure with a retry time is claimed again once that time comes (not
// before: the claim reports when), with its retry count; RequeueFailedKB
// queues every failed source at once, counts reset.
func TestKBRetrySchedule(t *testing.T) {
	ctx := context.Background()
	k := newKBDB(t)
	k.upsert("a", "alpha")
	j, err := claimOne(k.db, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(200 * time.Millisecond).Truncate(time.Millisecond)
	if n, err := k.FailKBSources(ctx, "w1", []kbstore.KBFailure{{Job: j, Msg: "down; retry 1 of 5", Retries: 1, RetryAt: at}}); err != nil || n != 1 {
		t.Fatalf("fail: %d %v", n, err)
	}
	jobs, next, err := k.ClaimKBSources(ctx, "w1", time.Minute, 10, 0)
	if err != nil || len(jobs) != 0 || !next.Equal(at) {
		t.Fatalf("before the retry: %+v next %v (want %v) %v", jobs, next, at, err)
	}
	if s := k.source("a"); s.Status != "failed" || *s.Error != "down; retry 1 of 5" {
		t.Fatalf("waiting for its retry: %+v", s)
	}
	// Claimable once its retry time has come (before, a claim takes nothing).
	testkit.Within(time.Until(at)+5*time.Second, func() bool {
		jobs, next, err = k.ClaimKBSources(ctx, "w1", time.Minute, 10, 0)
		return err != nil || len(jobs) > 0
	})
	if err != nil || len(jobs) != 1 || jobs[0].Retries != 1 || !next.IsZero() || time.Now().Before(at) {
		t.Fatalf("retry due: %+v next %v %v", jobs, next, err)
	}
	// Failed for good (no retry time): only RequeueFailedKB brings it back.
	if err := failOne(k.db, jobs[0], "w1", "gave up"); err != nil {
		t.Fatal(err)
	}
	if _, err := claimOne(k.db, "w1", time.Minute); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a source failed for good was claimed: %v", err)
	}
	if n, err := k.RequeueFailedKB(ctx, k.col); err != nil || n != 1 {
		t.Fatalf("requeue: %d %v", n, err)
	}
	if j, err := claimOne(k.db, "w1", time.Minute); err != nil || j.Retries != 0 {
		t.Fatalf("after requeue: %+v %v", j, err)
	}
}

// The text mirror follows chunk writes of another process (through the
// vector log), drops deleted chunks and ranks by BM25.
func TestTextIndexFollowsWrites(t *testing.T) {
	ctx := context.Background()
	path := dbtest.Path(t, "t.db")
	a, b := storetest.Open(t, path), storetest.Open(t, path)
	org, err := a.Orgs.CreateOrg(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	col, err := a.KB.CreateCollection(ctx, org.ID, "c", "")
	if err != nil {
		t.Fatal(err)
	}
	m := vectorstore.VectorModel{Embedder: "test", Model: "m", Dims: 2}
	put := func(db *storage.Stores, ext string, texts ...string) {
		t.Helper()
		if _, err := db.KB.UpsertSource(ctx, org.ID, col.ID, kbstore.SourceInput{ExternalID: ext, Title: ext, Content: texts[0]}); err != nil {
			t.Fatal(err)
		}
		j, err := claimOne(db, "w", 1e12)
		if err != nil {
			t.Fatal(err)
		}
		var cs []kbstore.KBChunk
		for i, tx := range texts {
			cs = append(cs, kbstore.KBChunk{Index: i, Content: tx, Body: tx, Vec: []float32{1, 0}})
		}
		if err := completeOne(db, j, "w", m, cs); err != nil {
			t.Fatal(err)
		}
	}
	put(a, "wings", "swept wings at transonic speeds", "wing flutter")
	x := search.NewTextIndex(a.Vectors, a.KB.LoadText)
	space := kbstore.KBSpace(col.ID)
	hits, err := x.Search(ctx, space, "Wing", 5, nil)
	if err != nil || len(hits) != 2 {
		t.Fatalf("hits %v err %v", hits, err)
	}
	put(b, "heat", "heat transfer in hypersonic flow")
	if hits, _ := x.Search(ctx, space, "hypersonic heating", 5, nil); len(hits) != 1 {
		t.Fatalf("write of another process not seen: %v", hits)
	}
	if _, _, err := b.KB.DeleteSources(ctx, col.ID, []string{"wings"}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := x.Search(ctx, space, "wings", 5, nil); len(hits) != 0 {
		t.Fatalf("deleted chunks still found: %v", hits)
	}
	// Operators and quotes are just punctuation.
	for _, q := range []string{`"unterminated`, `NEAR(a b`, `*`, `heat OR`, `col:heat`, `^heat`, `-`, `🙂`} {
		if _, err := x.Search(ctx, space, q, 5, nil); err != nil {
			t.Errorf("text index %q: %v", q, err)
		}
	}
	if hits, _ := x.Search(ctx, space, `"heat" NEAR(`, 5, nil); len(hits) != 1 {
		t.Fatalf("quoted word: %v", hits)
	}
}
