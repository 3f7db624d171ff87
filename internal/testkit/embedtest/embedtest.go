// Package embedtest is a real local HTTP server standing in for an
// OpenAI-compatible embedding service (POST /v1/embeddings), which a test
// can take down and bring back: answering 503, too slow for the client's
// timeout, or not listening at all. The knowledge tests (app/kb) and the
// CLI tests (cmd) share it. It is imported by tests only.
package embedtest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/embed"
)

// State is how the service answers.
type State int

const (
	// Up answers with the built-in embedder's vectors.
	Up State = iota
	// Unavailable answers 503 Service Unavailable.
	Unavailable
	// Slow answers only after SlowDelay (a client with a shorter timeout
	// gives up first).
	Slow
	// Closed is not listening: connections are refused.
	Closed
)

// SlowDelay is how long a Slow service takes to answer.
const SlowDelay = 5 * time.Second

// Server is the service. URL (the base URL, ".../v1") stays the same
// through Closed and back.
type Server struct {
	URL  string
	Dims int
	// Requests counts the embedding requests received.
	Requests atomic.Int64

	t     testing.TB
	emb   *embed.Builtin
	addr  string
	mu    sync.Mutex
	state State
	srv   *http.Server
}

// New starts a service returning dims-long vectors, stopped at cleanup.
func New(t testing.TB, dims int) *Server {
	t.Helper()
	emb, err := embed.NewBuiltin(dims)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Dims: dims, t: t, emb: emb, addr: ln.Addr().String()}
	s.URL = "http://" + s.addr + "/v1"
	s.serve(ln)
	t.Cleanup(func() { s.Set(Closed) })
	return s
}

// Set changes how the service answers from now on. Closed stops
// listening (and drops open connections); leaving Closed listens again on
// the same address.
func (s *Server) Set(st State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case st == Closed && s.srv != nil:
		s.srv.Close()
		s.srv = nil
	case st != Closed && s.srv == nil:
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			s.t.Errorf("embedtest: listen again on %s: %v", s.addr, err)
			return
		}
		s.serve(ln)
	}
	s.state = st
}

func (s *Server) serve(ln net.Listener) {
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go s.srv.Serve(ln)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings":
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	case st == Unavailable:
		http.Error(w, `{"error":{"message":"model is loading"}}`, http.StatusServiceUnavailable)
		return
	case st == Slow:
		select {
		case <-time.After(SlowDelay):
		case <-r.Context().Done():
			return
		}
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	vecs, err := s.emb.Embed(context.Background(), req.Input)
	if err != nil {
		http.Error(w, `{"error":{"message":"embed"}}`, http.StatusInternalServerError)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, v := range vecs {
		out.Data = append(out.Data, item{"embedding", i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
