package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

const testKey = "sk-test-secret-key"

// embedServer is an OpenAI-compatible /v1/embeddings handler whose
// behaviour per request number (from 1) is set by the test; newEmbedServer
// serves it on a socket, newBubbleOpenAI calls it in process.
type embedServer struct {
	*httptest.Server
	h       http.Handler
	calls   atomic.Int32
	dims    int
	gotDims atomic.Int32
}

func newEmbedHandler(dims int, handler func(n int32, w http.ResponseWriter, input []string) bool) *embedServer {
	s := &embedServer{dims: dims}
	s.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer "+testKey {
			http.Error(w, `{"error":{"message":"bad request line or key"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model      string   `json:"model"`
			Input      []string `json:"input"`
			Dimensions int      `json:"dimensions"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-model" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		s.gotDims.Store(int32(req.Dimensions))
		if handler != nil && handler(n, w, req.Input) {
			return
		}
		writeEmbeddings(w, req.Input, dims, false)
	})
	return s
}

func newEmbedServer(t *testing.T, dims int, handler func(n int32, w http.ResponseWriter, input []string) bool) *embedServer {
	s := newEmbedHandler(dims, handler)
	s.Server = httptest.NewServer(s.h)
	t.Cleanup(s.Close)
	return s
}

// inProcess is an http.RoundTripper that serves each request with h on the
// client's side. Tests of retries and timeouts use it inside a synctest
// bubble: a socket's waits would hold the bubble's clock still.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); p.h.ServeHTTP(rec, r) }()
	select {
	case <-done:
		return rec.Result(), nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// newBubbleOpenAI is a client of srv's handler through inProcess.
func newBubbleOpenAI(t *testing.T, srv *embedServer, mod func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	return newTestOpenAI(t, "http://embeddings.test", func(c *OpenAIConfig) {
		c.HTTPClient = &http.Client{Transport: inProcess{srv.h}}
		if mod != nil {
			mod(c)
		}
	})
}

// vectorFor is a deterministic unnormalised vector for a text.
func vectorFor(text string, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(len(text)+i+1) * 3
	}
	return v
}

// writeEmbeddings answers with the vectors, in reverse order when asked.
func writeEmbeddings(w http.ResponseWriter, input []string, dims int, reverse bool) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i, s := range input {
		data = append(data, item{"embedding", i, vectorFor(s, dims)})
	}
	if reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "test-model"})
}

func newTestOpenAI(t *testing.T, url string, mod func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{BaseURL: url, APIKey: testKey, Model: "test-model", Dimensions: 8,
		BatchSize: 2, MaxRetries: 3, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func checkVectors(t *testing.T, texts []string, got [][]float32) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, v := range got {
		want := vectorFor(texts[i], len(v))
		normalize(want)
		for k := range v {
			if math.Abs(float64(v[k]-want[k])) > 1e-6 {
				t.Fatalf("vector %d is not the normalised vector of %q", i, texts[i])
			}
		}
	}
}

// maxBackoffs bounds the backoff waits of newTestOpenAI's client (at most
// 5 ms each, three retries).
const maxBackoffs = 15 * time.Millisecond

var fiveTexts = []string{"a", "bb", "ccc", "dddd", "eeeee"}

func TestOpenAIBatchesAndOrders(t *testing.T) {
	srv := newEmbedServer(t, 8, func(n int32, w http.ResponseWriter, input []string) bool {
		writeEmbeddings(w, input, 8, true) // indexes out of order
		return true
	})
	o := newTestOpenAI(t, srv.URL+"/v1/", nil)
	got, err := o.Embed(context.Background(), fiveTexts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, fiveTexts, got)
	if c := srv.calls.Load(); c != 3 {
		t.Errorf("%d requests for 5 texts in batches of 2", c)
	}
	if srv.gotDims.Load() != 0 {
		t.Error("dimensions sent although SendDimensions is off")
	}
	o = newTestOpenAI(t, srv.URL, func(c *OpenAIConfig) { c.SendDimensions = true })
	if _, err := o.Embed(context.Background(), fiveTexts[:1]); err != nil || srv.gotDims.Load() != 8 {
		t.Errorf("dimensions not sent: %v", err)
	}
	if o.Name() != "openai" || o.Model() != "test-model" || o.Dimensions() != 8 {
		t.Error("identity")
	}
}

func TestOpenAIRetries(t *testing.T) {
	tests := []struct {
		name      string
		fail      func(n int32, w http.ResponseWriter) bool
		wantErr   string
		wantCalls int32
		minWait   time.Duration
	}{
		{"429 with Retry-After then success", func(n int32, w http.ResponseWriter) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
				return true
			}
			return false
		}, "", 2, time.Second},
		{"500 then success", func(n int32, w http.ResponseWriter) bool {
			if n <= 2 {
				http.Error(w, "boom", http.StatusInternalServerError)
				return true
			}
			return false
		}, "", 3, 0},
		{"persistent 503 gives up", func(n int32, w http.ResponseWriter) bool {
			http.Error(w, `{"error":"model loading"}`, http.StatusServiceUnavailable)
			return true
		}, "HTTP 503: model loading (gave up after 4 attempts)", 4, 0},
		{"400 is final", func(n int32, w http.ResponseWriter) bool {
			http.Error(w, `{"error":{"message":"input too long for key `+testKey+`"}}`, http.StatusBadRequest)
			return true
		}, "HTTP 400: input too long for key [redacted]", 1, 0},
		{"short count", func(n int32, w http.ResponseWriter) bool {
			writeEmbeddings(w, []string{"x"}, 8, false)
			return true
		}, "sent 2 texts, got 1 embeddings", 1, 0},
		{"duplicate index", func(n int32, w http.ResponseWriter) bool {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,1,1,1,1,1,1,1]},{"index":0,"embedding":[1,1,1,1,1,1,1,1]}]}`)
			return true
		}, "index 0 returned twice", 1, 0},
		{"wrong dimensions", func(n int32, w http.ResponseWriter) bool {
			writeEmbeddings(w, []string{"a", "bb"}, 4, false)
			return true
		}, `model "test-model" returned 4 dimensions, configured 8`, 1, 0},
		{"bad JSON", func(n int32, w http.ResponseWriter) bool {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,2`)
			return true
		}, "bad JSON in response", 1, 0},
	}
	// In a synctest bubble the waits (backoff, Retry-After) take no real
	// time and are measured exactly.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newEmbedHandler(8, func(n int32, w http.ResponseWriter, _ []string) bool { return tc.fail(n, w) })
				o := newBubbleOpenAI(t, srv, nil)
				start := time.Now()
				got, err := o.Embed(context.Background(), []string{"a", "bb"})
				if tc.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					checkVectors(t, []string{"a", "bb"}, got)
				} else {
					if !errors.Is(err, ErrEmbedder) || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("error %v, want ErrEmbedder with %q", err, tc.wantErr)
					}
					// Only a service that kept failing through the retries is
					// "unavailable" (the worker retries those sources later).
					if transient := strings.Contains(tc.wantErr, "gave up"); errors.Is(err, ErrUnavailable) != transient {
						t.Fatalf("error %v: ErrUnavailable %v, want %v", err, errors.Is(err, ErrUnavailable), transient)
					}
					if strings.Contains(err.Error(), testKey) {
						t.Fatal("error leaks the API key")
					}
				}
				if c := srv.calls.Load(); c != tc.wantCalls {
					t.Errorf("%d requests, want %d", c, tc.wantCalls)
				}
				if d := time.Since(start); d < tc.minWait || d > tc.minWait+maxBackoffs {
					t.Errorf("retried after %v, Retry-After said %v", d, tc.minWait)
				}
			})
		})
	}
}

func TestOpenAISlowServerTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		srv := newEmbedHandler(8, func(n int32, w http.ResponseWriter, _ []string) bool {
			<-release
			return false
		})
		defer close(release) // so the handlers end inside the bubble
		o := newBubbleOpenAI(t, srv, func(c *OpenAIConfig) { c.Timeout = 30 * time.Millisecond; c.MaxRetries = 1 })
		start := time.Now()
		_, err := o.Embed(context.Background(), []string{"a"})
		if !errors.Is(err, ErrEmbedder) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "gave up after 2 attempts") {
			t.Fatalf("error %v", err)
		}
		if d := time.Since(start); d < 60*time.Millisecond || d > 60*time.Millisecond+maxBackoffs {
			t.Fatalf("gave up after %v, want two 30 ms timeouts", d)
		}
	})
}

func TestOpenAICancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newEmbedHandler(8, func(n int32, w http.ResponseWriter, _ []string) bool {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		})
		o := newBubbleOpenAI(t, srv, func(c *OpenAIConfig) { c.BackoffBase, c.BackoffMax = time.Hour, time.Hour })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := o.Embed(ctx, fiveTexts)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 50*time.Millisecond {
			t.Fatalf("error %v after %v, want the context's error at its 50 ms deadline", err, time.Since(start))
		}
	})
}

func TestNewOpenAIValidates(t *testing.T) {
	ok := OpenAIConfig{BaseURL: "http://127.0.0.1:11434", Model: "nomic-embed-text", Dimensions: 768}
	for name, mod := range map[string]func(*OpenAIConfig){
		"no URL":        func(c *OpenAIConfig) { c.BaseURL = "" },
		"relative URL":  func(c *OpenAIConfig) { c.BaseURL = "/v1" },
		"ftp URL":       func(c *OpenAIConfig) { c.BaseURL = "ftp://x" },
		"no model":      func(c *OpenAIConfig) { c.Model = " " },
		"no dims":       func(c *OpenAIConfig) { c.Dimensions = 0 },
		"batch":         func(c *OpenAIConfig) { c.BatchSize = -1 },
		"concurrency":   func(c *OpenAIConfig) { c.Concurrency = 1000 },
		"negative wait": func(c *OpenAIConfig) { c.Timeout = -time.Second },
	} {
		cfg := ok
		mod(&cfg)
		if _, err := NewOpenAI(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	o, err := NewOpenAI(ok)
	if err != nil {
		t.Fatal(err)
	}
	if o.endpoint != "http://127.0.0.1:11434/v1/embeddings" || o.cfg.BatchSize != 64 || o.cfg.Concurrency != 2 || o.cfg.MaxRetries != 5 || o.cfg.Timeout != 30*time.Second {
		t.Errorf("defaults: %+v %s", o.cfg, o.endpoint)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":                              0,
		"2":                             2 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"-1":                            0,
		"junk":                          0,
		"99999":                         maxRetryAfter,
		"Wed, 01 Jan 2025 00:00:10 GMT": 10 * time.Second,
		"Tue, 31 Dec 2024 23:59:00 GMT": 0,
	} {
		if got := parseRetryAfter(h, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}
