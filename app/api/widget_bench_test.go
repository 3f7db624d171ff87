package api

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"testing"
	"time"
)

// BenchmarkWidgetRoundTrip: a visitor's message through the public widget
// endpoint with builtin (token and origin checks, the limits, the daily
// count in the database, retrieval over 100,000 chunks, the quote
// streamed, the turn stored), from the request to the stream's end:
//
//	go test ./app -run '^$' -bench WidgetRoundTrip -benchtime 300x
func BenchmarkWidgetRoundTrip(b *testing.B) {
	e, key, _ := benchEnv(b, func(c *serveConfig) {
		c.Widget.VisitorPerMinute, c.Widget.AddressPerMinute, c.Widget.SessionsPerMinute = 1<<30, 1<<30, 1<<30
	})
	var col struct {
		Data struct{ Collections []struct{ ID, Name string } }
	}
	e.doJSON("GET", "/api/v1/kb/collections", key, nil, &col)
	agent := e.createAgent(key, map[string]any{"name": "Widget bench", "type": "chat",
		"config":    map[string]any{"allowedDomains": []string{"http://localhost:8080"}, "maxMessagesPerDay": 10_000_000},
		"knowledge": map[string]any{"collectionIds": []string{col.Data.Collections[0].ID}, "topK": 5}})
	const origin = "http://localhost:8080"
	client := &http.Client{}
	r := rand.New(rand.NewSource(6))
	var s widgetSession
	say := func(q string) time.Duration {
		body, _ := json.Marshal(map[string]string{"content": q})
		req, _ := http.NewRequest("POST", e.url+"/api/public/chat/sessions/"+s.ConversationID+"/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		req.Header.Set("Authorization", "Bearer "+s.Token)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		all, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != 200 || !bytes.Contains(all, []byte("event: done")) {
			b.Fatalf("%d %s", resp.StatusCode, all)
		}
		return d
	}
	s = e.widgetSession(agent, origin)
	say(convWords(r, 6)) // warm the indexes
	var ds []time.Duration
	turns := 0
	for b.Loop() {
		if turns%20 == 0 {
			s = e.widgetSession(agent, origin)
		}
		turns++
		ds = append(ds, say(convWords(r, 6)))
	}
	b.ReportMetric(percentile(ds, 0.5), "p50-ms")
	b.ReportMetric(percentile(ds, 0.95), "p95-ms")
}
