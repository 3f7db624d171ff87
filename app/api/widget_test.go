package api

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	widgetapi "github.com/agentd/agentd/app/api/widget"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// widgetEnv is agentd with a chat agent listed on localhost and
// *.example.com, answering from the bakery collection; its widget clock
// is the test's.
type widgetEnv struct {
	*convEnv
	clock atomic.Int64 // unix nanoseconds
}

func newWidgetEnv(t *testing.T, scripted bool, config map[string]any, extra ...func(*serveConfig)) *widgetEnv {
	t.Helper()
	w := &widgetEnv{}
	w.clock.Store(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).UnixNano())
	cfg := map[string]any{"allowedDomains": []string{"http://localhost:8123", "*.example.com"}, "greeting": "Hi! Ask me about the bakery."}
	for k, v := range config {
		cfg[k] = v
	}
	opts := append([]func(*serveConfig){func(c *serveConfig) {
		c.Widget.Now = func() time.Time { return time.Unix(0, w.clock.Load()) }
	}}, extra...)
	w.convEnv = newConvEnv(t, scripted, map[string]any{"config": cfg}, opts...)
	return w
}

func (w *widgetEnv) advance(d time.Duration) { w.clock.Add(int64(d)) }

// pub calls a public widget route as a page at origin would.
func (e *testEnv) pub(method, path, origin, token string, body any) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

type widgetSession struct {
	Token, ConversationID, Greeting string
}

func (e *testEnv) widgetSession(agentID, origin string) widgetSession {
	e.t.Helper()
	code, h, b := e.pub("POST", "/api/public/chat/"+agentID+"/sessions", origin, "", map[string]any{})
	if code != 201 {
		e.t.Fatalf("session: %d %s", code, b)
	}
	if h.Get("Access-Control-Allow-Origin") != origin {
		e.t.Fatalf("session: CORS %q for %s", h.Get("Access-Control-Allow-Origin"), origin)
	}
	var out struct{ Data widgetSession }
	json.Unmarshal(b, &out)
	return out.Data
}

// widgetEvent is one server-sent event.
type widgetEvent struct {
	name string
	data map[string]any
}

func readWidgetSSE(t testing.TB, b []byte) []widgetEvent {
	t.Helper()
	var out []widgetEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	var cur widgetEvent
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "event: "):
			cur.name = l[7:]
		case strings.HasPrefix(l, "data: "):
			if err := json.Unmarshal([]byte(l[6:]), &cur.data); err != nil {
				t.Fatalf("event data %q: %v", l, err)
			}
		case l == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = widgetEvent{}
		}
	}
	return out
}

// widgetSay sends a visitor message and returns the status, headers and
// body (the stream when 200).
func (e *testEnv) widgetSay(s widgetSession, origin, content string) (int, http.Header, []byte) {
	e.t.Helper()
	return e.pub("POST", "/api/public/chat/sessions/"+s.ConversationID+"/messages", origin, s.Token, map[string]any{"content": content})
}

// A listed page gets the look, a session with the greeting, a streamed
// answer quoting the knowledge with its citation, and the history; the
// conversation is a widget one for the operator's API and events.
func TestWidgetConversation(t *testing.T) {
	e := newWidgetEnv(t, false, map[string]any{"theme": "dark", "primaryColor": "#0f766e"})
	const origin = "http://localhost:8123"
	code, h, b := e.pub("GET", "/api/public/chat/"+e.agentID+"/config", origin, "", nil)
	if code != 200 || h.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(string(b), `"theme":"dark"`) ||
		!strings.Contains(string(b), `"primaryColor":"#0f766e"`) || strings.Contains(string(b), "allowedDomains") {
		t.Fatalf("config: %d %v %s", code, h, b)
	}
	s := e.widgetSession(e.agentID, origin)
	if s.Token == "" || s.ConversationID == "" || s.Greeting != "Hi! Ask me about the bakery." {
		t.Fatalf("session %+v", s)
	}
	code, h, b = e.widgetSay(s, origin, "When does the bakery open?")
	if code != 200 || h.Get("Content-Type") != "text/event-stream" || h.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("message: %d %v %s", code, h, b)
	}
	evs := readWidgetSSE(t, b)
	if len(evs) < 2 || evs[0].name != "delta" || evs[len(evs)-1].name != "done" {
		t.Fatalf("events %+v", evs)
	}
	msg := evs[len(evs)-1].data["message"].(map[string]any)
	cites := msg["citations"].([]any)
	if !strings.Contains(msg["content"].(string), "opens at 7:00") || len(cites) == 0 || cites[0].(map[string]any)["externalId"] != "hours" {
		t.Fatalf("answer %+v", msg)
	}
	code, _, b = e.pub("GET", "/api/public/chat/sessions/"+s.ConversationID+"/messages", origin, s.Token, nil)
	var hist struct {
		Data struct {
			Token    string
			Greeting string
			Messages []convMessage
		}
	}
	json.Unmarshal(b, &hist)
	if code != 200 || len(hist.Data.Messages) != 2 || hist.Data.Messages[0].Content != "When does the bakery open?" ||
		hist.Data.Token == "" || hist.Data.Greeting == "" {
		t.Fatalf("history: %d %s", code, b)
	}
	// The greeting is the widget's: it never reaches the stored messages.
	v := e.conversation(e.key, s.ConversationID)
	if v.Channel != "widget" || v.MessageCount != 2 {
		t.Fatalf("conversation %+v", v)
	}
	var evList struct {
		Data struct {
			Events []struct {
				Type string
				Data map[string]any
			}
		}
	}
	e.doJSON("GET", "/api/v2/events?limit=100", e.key, nil, &evList)
	started := false
	for _, ev := range evList.Data.Events {
		if ev.Type == "conversation.started" && ev.Data["id"] == s.ConversationID {
			started = ev.Data["channel"] == "widget"
		}
	}
	if !started {
		t.Fatalf("conversation.started does not carry channel widget: %+v", evList.Data)
	}
	// A subdomain under *.example.com is listed too.
	if code, _, b := e.pub("POST", "/api/public/chat/"+e.agentID+"/sessions", "https://shop.example.com", "", map[string]any{}); code != 201 {
		t.Fatalf("wildcard: %d %s", code, b)
	}
}

// The preflight and the answers carry CORS headers for listed origins only.
func TestWidgetCORS(t *testing.T) {
	e := newWidgetEnv(t, false, nil)
	s := e.widgetSession(e.agentID, "http://localhost:8123")
	for _, c := range []struct {
		path, origin string
		ok           bool
	}{
		{"/api/public/chat/" + e.agentID + "/sessions", "http://localhost:8123", true},
		{"/api/public/chat/" + e.agentID + "/sessions", "http://localhost:9", false}, // another port is another origin
		{"/api/public/chat/" + e.agentID + "/sessions", "https://evil.test", false},
		{"/api/public/chat/" + e.agentID + "/sessions", "https://example.com", false}, // *.example.com is subdomains only
		{"/api/public/chat/sessions/" + s.ConversationID + "/messages", "https://a.example.com", true},
		{"/api/public/chat/sessions/" + s.ConversationID + "/messages", "https://evil.test", false},
	} {
		req, _ := http.NewRequest("OPTIONS", e.url+c.path, nil)
		req.Header.Set("Origin", c.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("Access-Control-Allow-Origin")
		if c.ok != (got == c.origin) || (!c.ok && got != "") || (c.ok && !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization")) {
			t.Errorf("preflight %s from %s: %d %v", c.path, c.origin, resp.StatusCode, resp.Header)
		}
	}
}

// Refusals: an unlisted, absent or opaque origin, a voice or inactive
// agent (403, no CORS), an unknown agent (the same 403); forged, expired and
// rotated-out tokens (401); another conversation's id (403); an
// oversized or empty message. None of them stores anything.
func TestWidgetRefusals(t *testing.T) {
	e := newWidgetEnv(t, false, nil)
	const origin = "http://localhost:8123"
	for _, o := range []string{"https://evil.test", "", "null", "http://localhost.evil.test"} {
		code, h, b := e.pub("POST", "/api/public/chat/"+e.agentID+"/sessions", o, "", map[string]any{})
		if code != 403 || h.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(string(b), "unavailable") {
			t.Errorf("origin %q: %d %v %s", o, code, h, b)
		}
	}
	if code, h, _ := e.pub("GET", "/api/public/chat/"+e.agentID+"/config", "https://evil.test", "", nil); code != 403 || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("config from an unlisted origin: %d %v", code, h)
	}
	voice := e.createAgent(e.key, map[string]any{"name": "Phone", "type": "voice", "config": map[string]any{}})
	inactive := e.createAgent(e.key, map[string]any{"name": "Old", "type": "chat", "config": map[string]any{"allowedDomains": []string{"http://localhost:8123"}}})
	if code, _, b := e.do("DELETE", "/api/v1/agents/"+inactive, e.key, nil); code != 200 && code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	empty := e.createAgent(e.key, map[string]any{"name": "Nowhere", "type": "chat", "config": map[string]any{"allowedDomains": []string{}}})
	for _, id := range []string{voice, inactive, empty} {
		if code, _, b := e.pub("POST", "/api/public/chat/"+id+"/sessions", origin, "", map[string]any{}); code != 403 {
			t.Errorf("agent %s: %d %s", id, code, b)
		}
	}
	if code, _, _ := e.pub("POST", "/api/public/chat/no-such-agent/sessions", origin, "", map[string]any{}); code != 403 {
		t.Errorf("unknown agent: %d", code)
	}

	s := e.widgetSession(e.agentID, origin)
	other := e.widgetSession(e.agentID, origin)
	say := func(name string, s widgetSession, content string, want int, msg string) {
		t.Helper()
		code, _, b := e.widgetSay(s, origin, content)
		if code != want || !strings.Contains(string(b), msg) {
			t.Errorf("%s: %d %s", name, code, b)
		}
	}
	forged := s
	payload, sig, _ := strings.Cut(s.Token, ".")
	flip := "A"
	if sig[0] == 'A' {
		flip = "B"
	}
	forged.Token = payload + "." + flip + sig[1:] // the first character: every bit of it counts
	say("forged signature", forged, "hi", 401, "invalid or expired")
	last := map[bool]string{true: "B", false: "A"}[sig[len(sig)-1] == 'A'] // the spare bits of the last character
	forged.Token = payload + "." + sig[:len(sig)-1] + last
	say("signature spelled otherwise", forged, "hi", 401, "invalid or expired")
	raw, _ := jsonB64(payload)
	raw = strings.Replace(raw, s.ConversationID, other.ConversationID, 1)
	forged.Token, forged.ConversationID = b64(raw)+"."+sig, other.ConversationID
	say("forged claims", forged, "hi", 401, "invalid or expired")
	say("garbage", widgetSession{Token: "x", ConversationID: s.ConversationID}, "hi", 401, "invalid")
	say("no token", widgetSession{ConversationID: s.ConversationID}, "hi", 401, "invalid")
	say("another conversation's id", widgetSession{Token: s.Token, ConversationID: other.ConversationID}, "hi", 403, "not for this conversation")
	if code, _, _ := e.pub("GET", "/api/public/chat/sessions/"+other.ConversationID+"/messages", origin, s.Token, nil); code != 403 {
		t.Errorf("history of another conversation: %d", code)
	}
	if code, _, _ := e.pub("GET", "/api/public/chat/sessions/"+s.ConversationID+"/messages", "https://evil.test", s.Token, nil); code != 403 {
		t.Errorf("history from an unlisted origin: %d", code)
	}
	say("oversized", s, strings.Repeat("é", 4001), 413, "at most 4000 characters")
	say("empty", s, "  ", 400, "content: required")
	// Expiry: tokens last two hours; reading the history renews one.
	e.advance(3 * time.Hour)
	say("expired", s, "hi", 401, "invalid or expired")
	e.advance(-3 * time.Hour)
	// Rotating the key (agentd widget rotate-secret) ends every token.
	if err := e.app.srv.widget.Service().RotateSecret(context.Background()); err != nil {
		t.Fatal(err)
	}
	say("rotated", s, "hi", 401, "invalid or expired")
	for _, id := range []string{s.ConversationID, other.ConversationID} {
		if v := e.conversation(e.key, id); v.MessageCount != 0 {
			t.Errorf("a refused message was stored: %+v", v)
		}
	}
}

// Another organization's agent listing the same site: a token of one
// never reaches the other's conversation, and the operator API of one
// organization does not see the other's widget conversations.
func TestWidgetIsolation(t *testing.T) {
	e := newWidgetEnv(t, false, nil)
	const origin = "http://localhost:8123"
	_, keyB := e.newOrg("rival")
	agentB := e.createAgent(keyB, map[string]any{"name": "B", "type": "chat", "config": map[string]any{"allowedDomains": []string{"http://localhost:8123"}}})
	a := e.widgetSession(e.agentID, origin)
	b := e.widgetSession(agentB, origin)
	for _, c := range []widgetSession{{Token: a.Token, ConversationID: b.ConversationID}, {Token: b.Token, ConversationID: a.ConversationID}} {
		if code, _, body := e.widgetSay(c, origin, "hi"); code != 403 {
			t.Errorf("cross-organization message: %d %s", code, body)
		}
		if code, _, _ := e.pub("GET", "/api/public/chat/sessions/"+c.ConversationID+"/messages", origin, c.Token, nil); code != 403 {
			t.Errorf("cross-organization history: %d", code)
		}
	}
	if code, _, _ := e.do("GET", "/api/v1/conversations/"+b.ConversationID, e.key, nil); code != 404 {
		t.Errorf("org A reads org B's widget conversation: %d", code)
	}
	// An API conversation is not the widget's, whatever the token says.
	apiConv := e.startConversation(e.key, e.agentID)
	if code, _, _ := e.widgetSay(widgetSession{Token: a.Token, ConversationID: apiConv}, origin, "hi"); code != 403 {
		t.Errorf("widget token on an API conversation: %d", code)
	}
}

// Per-visitor and per-address rates, new sessions per address and the
// agent's daily cap answer 429 with Retry-After; the cap is counted in
// the database, so a second server on the same file sees it.
func TestWidgetLimits(t *testing.T) {
	path := ""
	e := newWidgetEnv(t, false, map[string]any{"maxMessagesPerDay": 4}, func(c *serveConfig) {
		c.Widget.VisitorPerMinute, c.Widget.SessionsPerMinute = 2, 5
		path = c.DBPath
	})
	const origin = "http://localhost:8123"
	s := e.widgetSession(e.agentID, origin)
	for i := 0; i < 2; i++ {
		if code, _, b := e.widgetSay(s, origin, "When do you open?"); code != 200 {
			t.Fatalf("message %d: %d %s", i, code, b)
		}
	}
	code, h, b := e.widgetSay(s, origin, "And on Sundays?")
	if ra, _ := strconv.Atoi(h.Get("Retry-After")); code != 429 || ra < 1 || ra > int(widgetMinute().Seconds()) || h.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("per-visitor rate: %d %v %s", code, h, b)
	}
	e.advance(widgetMinute())
	// A second process on the same database counts against the same cap.
	second := startTestEnv(t, path, func(c *serveConfig) {
		c.Widget.Now = func() time.Time { return time.Unix(0, e.clock.Load()) }
	})
	s2 := second.widgetSession(e.agentID, origin)
	for i := 0; i < 2; i++ {
		if code, _, b := second.widgetSay(s2, origin, "When do you open?"); code != 200 {
			t.Fatalf("second server message %d: %d %s", i, code, b)
		}
	}
	code, h, b = e.widgetSay(s, origin, "When do you open?")
	ra, _ := strconv.Atoi(h.Get("Retry-After"))
	if code != 429 || !strings.Contains(string(b), "messages for today") || ra != 12*3600-int(widgetMinute().Seconds()) {
		t.Fatalf("daily cap: %d %v %s", code, h, b)
	}
	if code, _, _ := second.widgetSay(s2, origin, "hi"); code != 429 {
		t.Fatalf("daily cap on the second server: %d", code)
	}
	e.advance(12 * time.Hour) // the next UTC day
	if code, _, b := e.widgetSay(e.widgetSession(e.agentID, origin), origin, "When do you open?"); code != 200 {
		t.Fatalf("next day: %d %s", code, b)
	}
	// New sessions per address: 5 a minute (two were made above).
	for i := 0; ; i++ {
		code, h, _ := e.pub("POST", "/api/public/chat/"+e.agentID+"/sessions", origin, "", map[string]any{})
		if code == 429 {
			if h.Get("Retry-After") == "" || i != 4 {
				t.Fatalf("session rate after %d: %v", i, h)
			}
			break
		}
		if code != 201 || i > 10 {
			t.Fatalf("session %d: %d", i, code)
		}
	}
}

// One answer at a time per visitor: a second message while the first is
// being written is refused, and the daily count given back on failure.
func TestWidgetOneStream(t *testing.T) {
	e := newWidgetEnv(t, true, nil)
	const origin = "http://localhost:8123"
	s := e.widgetSession(e.agentID, origin)
	e.model.Push(llmtest.Reply{Content: "We open at seven.", Delay: 700 * time.Millisecond})
	done := make(chan int)
	go func() {
		code, _, _ := e.widgetSay(s, origin, "When do you open?")
		done <- code
	}()
	testkit.Eventually(t, 10*time.Second, func() bool { return len(e.model.Got()) > 0 }, "the model never got the first message")
	if code, h, b := e.widgetSay(s, origin, "Hello?"); code != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("second stream: %d %s", code, b)
	}
	if code := <-done; code != 200 {
		t.Fatalf("first stream: %d", code)
	}
	// The model failing is a 502 naming it, not a 500.
	e.model.Push(llmtest.Reply{Status: 500})
	if code, _, b := e.widgetSay(s, origin, "When do you open?"); code != 502 || !strings.Contains(string(b), "model service") {
		t.Fatalf("model down: %d %s", code, b)
	}
}

// widget.js is served to any page, gzipped when accepted, and stays
// under 30 KB gzipped.
func TestWidgetScript(t *testing.T) {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(widgetapi.Script)
	w.Close()
	if z.Len() > 30<<10 {
		t.Fatalf("widget.js is %d bytes gzipped, over 30 KB", z.Len())
	}
	t.Logf("widget.js: %d bytes, %d gzipped", len(widgetapi.Script), z.Len())
	e := newTestEnv(t)
	req, _ := http.NewRequest("GET", e.url+"/widget.js", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") ||
		!bytes.Equal(body, z.Bytes()) && len(body) > 30<<10 {
		t.Fatalf("widget.js: %d %v (%d bytes)", resp.StatusCode, resp.Header, len(body))
	}
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 304 {
		t.Fatalf("revalidation: %d", resp.StatusCode)
	}
}

func jsonB64(s string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return string(b), err
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// The per-address rate counts every visitor from one address.
func TestWidgetAddressRate(t *testing.T) {
	e := newWidgetEnv(t, false, nil, func(c *serveConfig) { c.Widget.AddressPerMinute = 3 })
	const origin = "http://localhost:8123"
	a, b := e.widgetSession(e.agentID, origin), e.widgetSession(e.agentID, origin)
	for i, s := range []widgetSession{a, b, a} {
		if code, _, body := e.widgetSay(s, origin, "When do you open?"); code != 200 {
			t.Fatalf("message %d: %d %s", i, code, body)
		}
	}
	if code, h, body := e.widgetSay(b, origin, "When do you open?"); code != 429 || h.Get("Retry-After") == "" || !strings.Contains(string(body), "this address") {
		t.Fatalf("per-address rate: %d %v %s", code, h, body)
	}
	e.advance(widgetMinute())
	if code, _, body := e.widgetSay(b, origin, "When do you open?"); code != 200 {
		t.Fatalf("next minute: %d %s", code, body)
	}
}
