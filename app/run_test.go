package app

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// An open event stream does not hold up a graceful stop.
func TestEventStreamEndsOnShutdown(t *testing.T) {
	logs := discardLogger()
	var out strings.Builder
	a, err := Open(context.Background(), Config{DBPath: dbtest.Path(t, "a.db"), Addr: "127.0.0.1:0", Log: logs, Out: &out,
		ShutdownTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	first, _, _ := strings.Cut(out.String(), "\n")
	key, _, _ := strings.Cut(strings.TrimPrefix(first, "owner API key: "), " ")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	req, _ := http.NewRequest("GET", "http://"+a.Addr()+"/api/v2/events/stream", nil)
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	start := time.Now()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("Run did not return with a stream open")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stop took %s", d)
	}
}
