package kb

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/embedtest"
	"github.com/agentd/agentd/storage/kbstore"
)

// retryCfg embeds through srv with no retries inside the client (each
// attempt fails fast) and a short automatic-retry backoff.
func retryCfg(srv *embedtest.Server, retries int, backoff time.Duration) Config {
	return Config{Embedder: "openai", OpenAIBaseURL: srv.URL, OpenAIModel: "test-model", OpenAIDimensions: srv.Dims,
		EmbedRetries: -1, EmbedTimeout: 300 * time.Millisecond, Retries: retries, RetryBackoff: backoff, PollInterval: -1}
}

// waitSource polls the collection's one source until ok holds.
func (k *testKB) waitSource(col string, limit time.Duration, what string, ok func(kbstore.Source) bool) kbstore.Source {
	k.t.Helper()
	var srcs []kbstore.Source
	testkit.Eventually(k.t, limit, func() bool {
		srcs = k.sources(col)
		return len(srcs) == 1 && ok(srcs[0])
	}, "not %s: %+v", what, &srcs)
	return srcs[0]
}

func failedWith(re *regexp.Regexp) func(kbstore.Source) bool {
	return func(s kbstore.Source) bool { return s.Status == "failed" && s.Error != nil && re.MatchString(*s.Error) }
}

func completed(s kbstore.Source) bool { return s.Status == "completed" }

// An embedding service that answers 503, times out or refuses connections
// fails the source with a scheduled retry in its error; once the service
// is back, the source completes on its own within the backoff, with no
// request from anyone (the worker is wake-only: only the retry wakes it).
func TestUnavailableEmbedderIsRetried(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state embedtest.State
		cause string
	}{
		{"503", embedtest.Unavailable, "HTTP 503: model is loading"},
		{"timeout", embedtest.Slow, "request failed"},
		{"closed", embedtest.Closed, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := embedtest.New(t, 64)
			k := newKB(t, retryCfg(srv, 5, 300*time.Millisecond))
			col := k.collection("docs")
			srv.Set(tc.state)
			k.upsert(col, "a", "Wings", "swept wings at transonic speed")
			s := k.waitSource(col, 10*time.Second, "failed with a retry", failedWith(regexp.MustCompile(
				`^embedding service unavailable: openai http://127\.0\.0\.1:\d+/v1/embeddings: .*`+regexp.QuoteMeta(tc.cause)+
					`.*; retry 1 of 5 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)))
			at, err := time.Parse(time.RFC3339, (*s.Error)[strings.LastIndex(*s.Error, " ")+1:])
			if err != nil || at.Before(time.Now().Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
				t.Fatalf("retry time %v %v in %q", at, err, *s.Error)
			}
			srv.Set(embedtest.Up)
			start := time.Now()
			s = k.waitSource(col, 10*time.Second, "completed", completed)
			if s.Error != nil || s.ChunkCount != 1 {
				t.Fatalf("after the service came back: %+v", s)
			}
			// Retries 1 to 3 fall due 0.3, 0.9 and 2.1 s after the failure.
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("completed %s after the service came back", d)
			}
			if res := k.search(col, "transonic wings", ModeSemantic, 0); len(res) != 1 {
				t.Fatalf("semantic search after the retry: %+v", res)
			}
		})
	}
}

// Automatic retries are bounded: after the last one the source stays
// failed and the service hears no more of it. Posting the same content
// again then reprocesses it (processing, not unchanged).
func TestRetriesAreBoundedAndRepostRetries(t *testing.T) {
	srv := embedtest.New(t, 64)
	k := newKB(t, retryCfg(srv, 2, 50*time.Millisecond))
	col := k.collection("docs")
	srv.Set(embedtest.Unavailable)
	k.upsert(col, "a", "Wings", "swept wings at transonic speed")
	k.waitSource(col, 10*time.Second, "given up", failedWith(regexp.MustCompile(
		`^embedding service unavailable: .*HTTP 503.*; gave up after 2 retries$`)))
	n := srv.Requests.Load()
	if n != 3 {
		t.Fatalf("%d embedding requests, want 3 (the first attempt and 2 retries)", n)
	}
	// Nothing must come: only waiting past the next backoff (200 ms) shows it.
	if testkit.Within(300*time.Millisecond, func() bool { return srv.Requests.Load() != n }) {
		t.Fatalf("%d more requests after giving up", srv.Requests.Load()-n)
	}

	srv.Set(embedtest.Up)
	if r := k.upsert(col, "a", "Wings", "swept wings at transonic speed"); r.Status != "processing" {
		t.Fatalf("same content for a failed source: %+v, want processing (queued again)", r)
	}
	if s := k.waitSource(col, 10*time.Second, "completed", completed); s.Error != nil {
		t.Fatalf("reposted source: %+v", s)
	}
	// Completed now: the same content again is unchanged.
	if r := k.upsert(col, "a", "Wings", "swept wings at transonic speed"); r.Status != "unchanged" {
		t.Fatalf("same content for a completed source: %+v", r)
	}
}

// A failure that says something about the texts (here: the service
// answers vectors of the wrong length) is not retried on its own; Reindex
// with Failed (agentd reindex --failed) retries it, and every other failed
// source, with the service fixed.
func TestReindexFailed(t *testing.T) {
	srv := embedtest.New(t, 64)
	cfg := retryCfg(srv, 5, time.Hour)
	cfg.OpenAIDimensions = 32 // the service returns 64
	db := openDB(t, dbtest.Path(t, "agentd.db"))
	k, stop := startKB(t, db, newOrg(t, db, "default"), cfg)
	col := k.collection("docs")
	k.upsert(col, "a", "Wings", "swept wings at transonic speed")
	k.waitSource(col, 10*time.Second, "failed for good", failedWith(regexp.MustCompile(`returned 64 dimensions, configured 32$`)))
	// The server's own worker, still on 32 dimensions, would race the
	// reindex for the requeued source (woken by its requeue) and fail it
	// again: CI saw "queued 1, done 0" on PostgreSQL.
	stop()
	cfg.OpenAIDimensions = 64
	queued, done, err := reindex(context.Background(), k.db, cfg, ReindexOptions{Failed: true})
	if err != nil || queued != 1 || done != 1 {
		t.Fatalf("reindex --failed: queued %d, done %d, %v", queued, done, err)
	}
	if s := k.sources(col)[0]; s.Status != "completed" || s.Error != nil {
		t.Fatalf("after reindex --failed: %+v", s)
	}
}
