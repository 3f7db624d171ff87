package api

import (
	"regexp"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/embedtest"
)

// Through the API: a source whose embedding service answers 503 is failed
// with its scheduled retry in `error`; once the service is back it
// completes with nobody asking; the same content posted for a failed
// source is queued again rather than unchanged.
func TestKBSourceRetriedWhenEmbedderReturns(t *testing.T) {
	srv := embedtest.New(t, 64)
	srv.Set(embedtest.Unavailable)
	e := newTestEnv(t, func(c *serveConfig) {
		c.KB.Embedder, c.KB.OpenAIBaseURL, c.KB.OpenAIModel, c.KB.OpenAIDimensions = "openai", srv.URL, "test-model", 64
		c.KB.EmbedRetries, c.KB.Retries, c.KB.RetryBackoff = -1, 1, 200*time.Millisecond
	})
	col := e.createCollection(e.key, "docs")
	post := func() string {
		var out struct{ Data struct{ Status string } }
		if code := e.doJSON("POST", "/api/v1/kb/sources", e.key, map[string]any{"collectionId": col, "externalId": "a",
			"title": "Wings", "content": "swept wings at transonic speed"}, &out); code != 200 && code != 201 {
			t.Fatalf("post source: %d", code)
		}
		return out.Data.Status
	}
	wait := func(what string, re *regexp.Regexp, status string) {
		t.Helper()
		testkit.Eventually(t, 10*time.Second, func() bool {
			l := e.sources(e.key, col).Data.Sources
			return len(l) == 1 && l[0].Status == status && (re == nil) == (l[0].Error == nil) && (re == nil || re.MatchString(*l[0].Error))
		}, "not %s", what)
	}
	post()
	wait("failed with a retry", regexp.MustCompile(`^embedding service unavailable: .*HTTP 503.*; retry 1 of 1 at \S+Z$`), "failed")
	wait("given up", regexp.MustCompile(`^embedding service unavailable: .*HTTP 503.*; gave up after 1 retries$`), "failed")
	srv.Set(embedtest.Up)
	if st := post(); st != "processing" {
		t.Fatalf("same content for a failed source answered %q, want processing", st)
	}
	wait("completed", nil, "completed")
}
