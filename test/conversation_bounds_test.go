package test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// Issue 32, the conversation engine: a scripted hostile model and a
// counting tool server against the real binary.

// convServer runs agentd on the scripted model, url tools allowed on
// loopback.
func convServer(t *testing.T, m *llmtest.Server, extra ...string) *server {
	t.Helper()
	return start(t, t.TempDir(), append([]string{"--llm", "openai", "--llm-url", m.URL, "--llm-model", "scripted",
		"--webhook-allow-private"}, extra...)...)
}

// peakKB is the child's peak resident set (VmHWM) in KiB.
func (s *server) peakKB() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		s.t.Skip("no /proc: peak memory is read on Linux")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// callWith is call with extra request headers.
func (s *server) callWith(method, path, key string, body any, header map[string]string) resp {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(b))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	r, err := client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer r.Body.Close()
	out, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, out}
}

// chatAgent creates an active chat agent with fields over the defaults
// and returns its id.
func (s *server) chatAgent(key string, fields map[string]any) string {
	s.t.Helper()
	body := map[string]any{"name": "Shop", "type": "chat", "status": "active", "instructions": "Be brief."}
	for k, v := range fields {
		body[k] = v
	}
	r := s.must("POST", "/api/v1/agents", key, body)
	if r.status != 201 {
		s.t.Fatalf("create agent: %d %s", r.status, r.body)
	}
	return dataID(s.t, r)
}

func (s *server) conversation(key, agent string) string {
	s.t.Helper()
	return dataID(s.t, s.must("POST", "/api/v1/conversations", key, map[string]any{"agentId": agent}))
}

// A model streaming 60 KB chunks without end: the turn fails with a 502
// naming the bound, and agentd's peak memory stays under 400 MB (it
// reached 5.8 GB in 20 s).
func TestHostileModelEndlessStream(t *testing.T) {
	m := llmtest.New(t)
	m.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "Hello ", Flood: 60 << 10} })
	s := convServer(t, m, "--llm-timeout", "20s")
	agent := s.chatAgent(s.Key, nil)
	// A watchdog: a process past 1 GB is stopped (the test has failed).
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
				if s.rssKB() > 1<<20 {
					s.Cmd.Process.Kill()
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range 4 { // four at once: the bound is per answer, memory per process
		wg.Go(func() {
			conv := s.conversation(s.Key, agent)
			t0 := time.Now()
			r := s.must("POST", "/api/v1/conversations/"+conv+"/messages", s.Key, map[string]any{"content": "hi", "stream": i%2 == 0})
			if i%2 == 1 && (r.status != 502 || !strings.Contains(string(r.body), "answer too large")) {
				t.Errorf("whole answer: %d %.300s", r.status, r.body)
			}
			if i%2 == 0 && !strings.Contains(string(r.body), "event: error") || !strings.Contains(string(r.body), "answer too large") {
				t.Errorf("streamed answer: %d %.300s", r.status, r.body[max(0, len(r.body)-300):])
			}
			if d := time.Since(t0); d > 15*time.Second {
				t.Errorf("the turn took %s", d)
			}
		})
	}
	wg.Wait()
	if peak := s.peakKB(); peak > 400<<10 {
		t.Fatalf("peak memory %d MB, want under 400 MB", peak>>10)
	} else {
		t.Logf("peak memory %d MB", peak>>10)
	}
}

// toolServer counts the POSTs it gets and the most at once; each takes
// hold.
type toolServer struct {
	*httptest.Server
	posts, now, most atomic.Int64
	agents           sync.Map // User-Agent header values seen, by count
}

func newToolServer(t *testing.T, hold time.Duration) *toolServer {
	ts := &toolServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.posts.Add(1)
		n := ts.now.Add(1)
		defer ts.now.Add(-1)
		for m := ts.most.Load(); n > m && !ts.most.CompareAndSwap(m, n); m = ts.most.Load() {
		}
		ts.agents.Store(strings.Join(r.Header.Values("User-Agent"), "|"), true)
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// manyCalls is a model that asks for 64 calls of the tool whenever tools
// are offered, and answers text when none are.
func manyCalls(r llmtest.Request) llmtest.Reply {
	if len(r.Tools) == 0 {
		return llmtest.Reply{Content: "Done."}
	}
	calls := make([]llmtest.ToolCall, 64)
	for i := range calls {
		calls[i] = llmtest.ToolCall{ID: fmt.Sprintf("c%d_%d", len(r.Messages), i), Name: "lookup", Arguments: `{"q":"x"}`}
	}
	return llmtest.Reply{ToolCalls: calls}
}

func lookupTool(url string) map[string]any {
	return map[string]any{"tools": []map[string]any{{"id": "t1", "name": "lookup", "description": "Look up",
		"url": url, "parameters": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}}
}

// One message made 320 tool POSTs (64 calls an answer, 5 rounds), one
// after another: now at most 16 a turn, 4 at once, each with one
// User-Agent, and the model sees "tool call limit reached" for the rest.
func TestHostileModelToolFanout(t *testing.T) {
	m := llmtest.New(t)
	m.Answer(manyCalls)
	tools := newToolServer(t, 100*time.Millisecond)
	s := convServer(t, m)
	s.must("POST", "/api/v2/tools/secret", s.Key, nil)
	agent := s.chatAgent(s.Key, lookupTool(tools.URL))
	conv := s.conversation(s.Key, agent)
	r := s.must("POST", "/api/v1/conversations/"+conv+"/messages", s.Key, map[string]any{"content": "look everything up"})
	if r.status != 200 {
		t.Fatalf("turn: %d %.500s", r.status, r.body)
	}
	if n := tools.posts.Load(); n > 16 || n == 0 {
		t.Fatalf("%d tool POSTs, want at most 16 (MaxToolCallsPerTurn)", n)
	}
	if n := tools.most.Load(); n > 4 {
		t.Fatalf("%d tool calls at once, want at most 4", n)
	}
	tools.agents.Range(func(k, _ any) bool {
		if ua := k.(string); ua != "agentd-tools" {
			t.Errorf("User-Agent headers %q, want one: agentd-tools", ua)
		}
		return true
	})
	var limited bool
	for _, req := range m.Got() {
		for _, msg := range req.Messages {
			if msg.Role == "tool" && strings.Contains(msg.Text(), "tool call limit reached") {
				limited = true
			}
		}
	}
	if !limited {
		t.Fatal("the model never read that the limit was reached")
	}
	t.Logf("%d tool POSTs, %d at most at once, %d model requests", tools.posts.Load(), tools.most.Load(), len(m.Got()))
}

// The turn deadline covers every model round and tool call: slow tools
// end the turn with a 504 at --turn-timeout, also in a stream (an error
// event).
func TestTurnDeadline(t *testing.T) {
	m := llmtest.New(t)
	m.Answer(manyCalls)
	tools := newToolServer(t, 1500*time.Millisecond)
	s := convServer(t, m, "--turn-timeout", "3s", "--tool-timeout", "2s")
	s.must("POST", "/api/v2/tools/secret", s.Key, nil)
	agent := s.chatAgent(s.Key, lookupTool(tools.URL))
	for _, stream := range []bool{false, true} {
		conv := s.conversation(s.Key, agent)
		t0 := time.Now()
		r := s.must("POST", "/api/v1/conversations/"+conv+"/messages", s.Key, map[string]any{"content": "look it up", "stream": stream})
		d := time.Since(t0)
		if d > 5*time.Second {
			t.Fatalf("stream %v: the turn took %s, deadline 3 s", stream, d)
		}
		if !strings.Contains(string(r.body), "turn deadline") || (!stream && r.status != 504) {
			t.Fatalf("stream %v: %d %.400s", stream, r.status, r.body)
		}
	}
}

// A client that never reads its stream is dropped within the write
// deadline (sse.WriteTimeout, 10 s): the answer it stopped reading is not
// finished for it afterwards.
func TestStreamClientNotReading(t *testing.T) {
	m := llmtest.New(t)
	// 30,000 one-word deltas: some 7 MB of OpenAI chunks, more than the
	// connection's buffers, under every bound of a model answer.
	m.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: strings.Repeat("a ", 30000)} })
	s := convServer(t, m)
	agent := s.chatAgent(s.Key, nil)
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":"talk"}]}`, agent)
	fmt.Fprintf(conn, "POST /api/v1/openai/chat/completions HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		s.Key, len(body), body)
	time.Sleep(10*time.Second + 4*time.Second) // not reading, past the write deadline
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	rest, _ := io.ReadAll(bufio.NewReader(conn))
	if bytes.Contains(rest, []byte("data: [DONE]")) {
		t.Fatalf("the stream of a client that stopped reading was finished when it read again (%d bytes)", len(rest))
	}
	if !bytes.Contains(rest, []byte("chat.completion.chunk")) {
		t.Fatalf("no stream at all: %.300s", rest)
	}
}

// One key holds at most MaxAnswerStreamsPerKey (32) streamed answers at
// once; the next is a 429 in the endpoint's error shape.
func TestStreamsPerKey(t *testing.T) {
	m := llmtest.New(t)
	m.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "slow", Delay: 4 * time.Second} })
	s := convServer(t, m)
	agent := s.chatAgent(s.Key, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var ok atomic.Int64
	for range 32 {
		wg.Go(func() {
			b, _ := json.Marshal(map[string]any{"model": agent, "stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/v1/openai/chat/completions", bytes.NewReader(b))
			req.Header.Set("x-api-key", s.Key)
			if r, err := client.Do(req); err == nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if r.StatusCode == 200 {
					ok.Add(1)
				}
			}
		})
	}
	if !waitFor(10*time.Second, func() bool { return m.Requests.Load() >= 32 }) {
		t.Fatalf("only %d streams reached the model", m.Requests.Load())
	}
	r := s.callWith("POST", "/api/v1/openai/chat/completions", s.Key, map[string]any{"model": agent, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, nil)
	var e struct {
		Error struct{ Message, Type string } `json:"error"`
	}
	json.Unmarshal(r.body, &e)
	if r.status != 429 || e.Error.Type != "rate_limit_error" || !strings.Contains(e.Error.Message, "at most 32") {
		t.Fatalf("33rd stream: %d %s", r.status, r.body)
	}
	wg.Wait()
	if ok.Load() != 32 {
		t.Fatalf("%d of the 32 streams answered", ok.Load())
	}
	// The slots are given back.
	m.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "again"} })
	if r := s.callWith("POST", "/api/v1/openai/chat/completions", s.Key, map[string]any{"model": agent, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, nil); r.status != 200 {
		t.Fatalf("after the streams ended: %d %s", r.status, r.body)
	}
}

// randomWords is n bytes of random lowercase words.
func randomWords(n int) string {
	b := make([]byte, n)
	for i := range b {
		if i%6 == 5 {
			b[i] = ' '
		} else {
			b[i] = byte('a' + rand.IntN(26))
		}
	}
	return string(b)
}

// writtenBytes is what the database has written so far: on PostgreSQL
// its WAL position; on SQLite what the child process wrote (wchar of
// /proc/PID/io: the WAL's pages, their checkpoints, its answers).
func (s *server) writtenBytes() int64 {
	if strings.HasPrefix(s.db, "postgres") {
		db, err := sql.Open("pgx", s.db)
		if err != nil {
			s.t.Fatal(err)
		}
		defer db.Close()
		var lsn int64
		if err := db.QueryRow("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").Scan(&lsn); err != nil {
			s.t.Fatal(err)
		}
		return lsn
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", s.Cmd.Process.Pid))
	if err != nil {
		s.t.Skip("no /proc: written bytes are read on Linux")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// x-agentd-call-id turns: multi-megabyte messages are a 400 naming the
// bound (they answered 500 "disk I/O error" from the 4th turn), turns
// of large messages append rows (the WAL grows by about the turns' size,
// not by the whole transcript each turn), and only live calls of the
// model's agent take turns.
func TestCallTranscriptTurns(t *testing.T) {
	m := llmtest.New(t)
	s := convServer(t, m, "--dialer", "sim", "--sim-ring-seconds", "0", "--sim-call-seconds", "120")
	voice := dataID(t, s.must("POST", "/api/v1/agents", s.Key, map[string]any{"name": "Voice", "type": "voice", "status": "active",
		"instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}}))
	other := s.chatAgent(s.Key, nil)
	call := dataID(t, s.must("POST", "/api/v1/calls/outbound", s.Key, map[string]any{"agentId": voice, "phoneNumber": "+14155550123"}))
	if !waitFor(15*time.Second, func() bool {
		return s.must("GET", "/api/v1/calls/"+call, s.Key, nil).json()["data"].(map[string]any)["status"] == "active"
	}) {
		t.Fatal("the call never went active")
	}
	turn := func(agent, content string) resp {
		return s.callWith("POST", "/api/v1/openai/chat/completions", s.Key, map[string]any{"model": agent,
			"messages": []any{map[string]any{"role": "user", "content": content}}}, map[string]string{"x-agentd-call-id": call})
	}
	huge := strings.Repeat("word ", 3900000/5)
	for i := range 5 {
		if r := turn(voice, huge); r.status != 400 || !strings.Contains(string(r.body), "at most 32768") {
			t.Fatalf("turn %d of 3.9 MB: %d %.300s", i+1, r.status, r.body)
		}
	}
	large := randomWords(30000) // PostgreSQL would compress repeated words to nothing
	before := s.writtenBytes()
	for i := range 30 {
		if r := turn(voice, large); r.status != 200 {
			t.Fatalf("turn %d of 30 KB: %d %.300s", i+1, r.status, r.body)
		}
	}
	// 30 turns of 30 KB: the conversation's message and the transcript's
	// line, each written once to the WAL and once more by its checkpoint
	// (about 4 MB on SQLite). Rewriting the whole transcript each turn
	// wrote 30 * 31 / 2 * 30 KB = 14 MB more, twice.
	written := s.writtenBytes() - before
	t.Logf("30 turns of 30 KB: %d KB written", written>>10)
	limit := int64(10 << 20) // SQLite: the WAL and its checkpoint's copy
	if strings.HasPrefix(s.db, "postgres") {
		// PostgreSQL's WAL alone: about 2 MB when this test was written,
		// 6-7 MB since the voice and architecture merges (both engines grew
		// by about as much; the cause is an open point of the closing note),
		// still linear: rewriting the transcript each turn adds about 7 MB.
		limit = 10 << 20
	}
	if written > limit {
		t.Fatalf("30 turns of 30 KB wrote %d MB", written>>20)
	}
	var rec struct {
		Data struct {
			Transcript []struct{ Role, Text, At string } `json:"transcript"`
		} `json:"data"`
	}
	json.Unmarshal(s.must("GET", "/api/v1/calls/"+call, s.Key, nil).body, &rec)
	if len(rec.Data.Transcript) != 60 || rec.Data.Transcript[0].Role != "user" || rec.Data.Transcript[1].Text != "ok" {
		t.Fatalf("call transcript: %d lines", len(rec.Data.Transcript))
	}
	if r := turn(other, "hi"); r.status != 404 {
		t.Fatalf("another agent's turn on the call: %d %s", r.status, r.body)
	}
	if r := s.must("DELETE", "/api/v1/calls/"+call, s.Key, nil); r.status >= 300 {
		t.Logf("cancel: %d %s", r.status, r.body)
	}
	if !waitFor(15*time.Second, func() bool {
		st := s.must("GET", "/api/v1/calls/"+call, s.Key, nil).json()["data"].(map[string]any)["status"]
		return st != "active"
	}) {
		t.Fatal("the call did not end")
	}
	if r := turn(voice, "still there?"); r.status != 409 {
		t.Fatalf("a turn on an ended call: %d %s", r.status, r.body)
	}
}

// On a small disk (a 64 MB tmpfs, mounted when the test runs as root),
// 3.9 MB call turns answered 500 from the 4th or 5th turn: each turn
// rewrote the whole transcript in one transaction, n times the message
// in the n-th turn (19.5 MB of WAL in the 4th, past the WAL index's first
// 4,062 frames), until SQLite could not grow its files ("database or disk
// is full", or "disk I/O error" when the WAL index could not grow). Now a
// message is at most 32 KB and a turn appends its own lines: 400s, then
// many turns of 30 KB all answered.
func TestCallTranscriptSmallDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("AGENTD_TEST_POSTGRES") != "" {
		t.Skip("SQLite's files on a small disk")
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) }) // after the server stops
	m := llmtest.New(t)
	s := start(t, dir, "--llm", "openai", "--llm-url", m.URL, "--llm-model", "scripted",
		"--dialer", "sim", "--sim-ring-seconds", "0", "--sim-call-seconds", "300")
	voice := dataID(t, s.must("POST", "/api/v1/agents", s.Key, map[string]any{"name": "Voice", "type": "voice", "status": "active",
		"instructions": "Be brief.", "phoneNumbers": []string{"+14155550100"}}))
	call := dataID(t, s.must("POST", "/api/v1/calls/outbound", s.Key, map[string]any{"agentId": voice, "phoneNumber": "+14155550123"}))
	turn := func(content string) resp {
		return s.callWith("POST", "/api/v1/openai/chat/completions", s.Key, map[string]any{"model": voice,
			"messages": []any{map[string]any{"role": "user", "content": content}}}, map[string]string{"x-agentd-call-id": call})
	}
	huge := strings.Repeat("word ", 3900000/5)
	for i := range 8 {
		if r := turn(huge); r.status >= 500 {
			t.Fatalf("turn %d of 3.9 MB: %d %.300s\n%s", i+1, r.status, r.body, s.Logs.String())
		}
	}
	large := strings.Repeat("word ", 30000/5)
	for i := range 200 {
		if r := turn(large); r.status != 200 {
			t.Fatalf("turn %d of 30 KB: %d %.300s", i+1, r.status, r.body)
		}
	}
}
