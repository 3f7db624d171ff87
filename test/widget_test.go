package test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// Issue 32, the chat widget's public surface, against the real binary: the
// daily cap against disconnects and failed streams, one address's share of
// an agent's day, no tool internals in public answers, origins compared
// with their port, one answer for an unknown and a foreign agent, and the
// visitor session's maximum lifetime.

// page is a web page on origin calling agentd's public chat routes from
// one client address (a loopback address of its own: 127.0.0.2 is another
// visitor than 127.0.0.1 for the per-address limits).
type page struct {
	t      *testing.T
	s      *server
	origin string
	client *http.Client
}

func newPage(t *testing.T, s *server, origin, from string) *page {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	return &page{t: t, s: s, origin: origin, client: &http.Client{Timeout: 60 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext}}}
}

// send starts a request; the caller reads and closes the answer.
func (p *page) send(ctx context.Context, method, path, token string, body any) *http.Response {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, p.s.URL+path, rd)
	if p.origin != "" {
		req.Header.Set("Origin", p.origin)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	r, err := p.client.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func (p *page) do(method, path, token string, body any) resp {
	p.t.Helper()
	r := p.send(context.Background(), method, path, token, body)
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, b}
}

type visitor struct{ token, conv string }

func (p *page) session(agentID string) visitor {
	p.t.Helper()
	r := p.do("POST", "/api/public/chat/"+agentID+"/sessions", "", map[string]any{})
	var out struct {
		Data struct{ Token, ConversationID string }
	}
	if json.Unmarshal(r.body, &out); r.status != 201 || out.Data.Token == "" {
		p.t.Fatalf("session from %s: %d %s", p.origin, r.status, r.body)
	}
	return visitor{out.Data.Token, out.Data.ConversationID}
}

func (p *page) say(v visitor, content string) resp {
	p.t.Helper()
	return p.do("POST", "/api/public/chat/sessions/"+v.conv+"/messages", v.token, map[string]any{"content": content})
}

// sseEvents splits a stream into its events' names and data.
func sseEvents(b []byte) (names []string, data []string) {
	for _, block := range strings.Split(string(b), "\n\n") {
		var name, d string
		for _, l := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(l, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(l, "data: "); ok {
				d = v
			}
		}
		if name != "" {
			names, data = append(names, name), append(data, d)
		}
	}
	return names, data
}

// hangingTool is a url tool that answers only when its caller goes away;
// arrived counts its calls, gone those whose caller went away.
func hangingTool(t *testing.T) (url string, arrived, gone *atomic.Int64) {
	arrived, gone = &atomic.Int64{}, &atomic.Int64{}
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // a server notices its client gone once the body is read
		arrived.Add(1)
		select {
		case <-r.Context().Done():
			gone.Add(1)
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL + "/lookup", arrived, gone
}

var lookupParams = map[string]any{"type": "object", "properties": map[string]any{"ref": map[string]any{"type": "string"}}}

// The daily cap is counted when the model is asked and never given back:
// a visitor who disconnects mid-answer N times has used N messages (the
// model saw N requests), and so has a visitor whose answers the model cut
// off. The old code gave each back, so 24 model turns left the counter at 5.
func TestWidgetCapHoldsAgainstDisconnects(t *testing.T) {
	model := llmtest.New(t)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.All(), "cut off") {
			return llmtest.Reply{Content: "We open at seven in the morning.", DropAfter: 2}
		}
		return llmtest.Reply{Content: "Let me look that up. ", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"ref":"A1"}`}}}
	})
	tool, arrived, gone := hangingTool(t)
	s := start(t, t.TempDir(), "--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted", "--webhook-allow-private")
	const origin, n = "https://shop.example.com", 4
	s.must("POST", "/api/v2/tools/secret", s.Key, nil) // url tools are called once the organization has one
	agent := s.chatAgent(s.Key, map[string]any{"config": map[string]any{"allowedDomains": []string{"shop.example.com"}, "maxMessagesPerDay": n},
		"tools": []map[string]any{{"id": "t1", "name": "lookup", "description": "Look up an order", "url": tool, "parameters": lookupParams}}})
	p := newPage(t, s, origin, "127.0.0.1")
	for i := range n {
		v := p.session(agent) // a session each: the last one's answer slot may not be free yet
		ctx, cancel := context.WithCancel(context.Background())
		r := p.send(ctx, "POST", "/api/public/chat/sessions/"+v.conv+"/messages", v.token, map[string]any{"content": "Where is my order?"})
		if r.StatusCode != 200 {
			b, _ := io.ReadAll(r.Body)
			t.Fatalf("message %d: %d %s", i, r.StatusCode, b)
		}
		sc := bufio.NewScanner(r.Body)
		for sc.Scan() && sc.Text() != "event: delta" {
		}
		if !waitFor(10*time.Second, func() bool { return arrived.Load() > int64(i) }) {
			t.Fatalf("message %d never called the tool", i)
		}
		cancel() // the visitor goes away mid-answer, while the tool runs
		r.Body.Close()
		if !waitFor(10*time.Second, func() bool { return gone.Load() > int64(i) }) {
			t.Fatalf("disconnect %d never reached the tool call", i)
		}
	}
	// The last turn has ended within this span (the old code gave the message back then).
	testkit.Never(t, 200*time.Millisecond, func() bool { return model.Requests.Load() != n }, "the model saw other than %d requests", n)
	db := dbtest.Open(t, s.db)
	defer db.Close()
	var counted int
	if err := db.QueryRow("SELECT count FROM widget_daily_counts WHERE agent_id = $1", agent).Scan(&counted); err != nil || counted != n {
		t.Errorf("counter %d (%v) after %d disconnects", counted, err, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // an answer would hang on the tool
	defer cancel()
	v := p.session(agent)
	r := p.send(ctx, "POST", "/api/public/chat/sessions/"+v.conv+"/messages", v.token, map[string]any{"content": "Where is my order?"})
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 429 || !strings.Contains(string(b), "messages for today") || r.Header.Get("Retry-After") == "" {
		t.Errorf("message %d of a cap of %d: %d %s", n+1, n, r.StatusCode, b)
	}

	// A model that cuts its answer off: the visitor got part of it and an
	// error event, and the message counts.
	cut := s.chatAgent(s.Key, map[string]any{"name": "Cut", "config": map[string]any{"allowedDomains": []string{"shop.example.com"}, "maxMessagesPerDay": 2}})
	v = p.session(cut)
	for i := range 2 {
		r := p.say(v, "cut off "+string(rune('a'+i)))
		names, _ := sseEvents(r.body)
		if r.status != 200 || len(names) < 2 || names[0] != "delta" || names[len(names)-1] != "error" {
			t.Fatalf("cut answer %d: %d %s", i, r.status, r.body)
		}
	}
	// The cut turns end just after their error event: nothing a client
	// sees marks that moment, so give them it before the third message.
	time.Sleep(200 * time.Millisecond)
	if r := p.say(v, "cut off c"); r.status != 429 || !strings.Contains(string(r.body), "messages for today") {
		t.Fatalf("after two failed streams on a cap of 2: %d %s", r.status, r.body)
	}
	if got := model.Requests.Load(); got != n+2 && !t.Failed() {
		t.Fatalf("the model saw %d requests, want %d", got, n+2)
	}
}

// One address may use its share of an agent's day (10 %, at least 20
// messages), counted in the database: across two processes, the address
// that used its share is refused until midnight UTC while another address
// is still answered. The old code let one address spend the whole day.
func TestWidgetAddressShareOfTheDay(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir)
	b := start(t, dir) // a second process on the same database
	const origin = "https://shop.example.com"
	agent := a.chatAgent(a.Key, map[string]any{"config": map[string]any{"allowedDomains": []string{"shop.example.com"}, "maxMessagesPerDay": 100}})
	pa, pb := newPage(t, a, origin, "127.0.0.1"), newPage(t, b, origin, "127.0.0.1")
	sent := 0
	for sent < 20 {
		va, vb := pa.session(agent), pb.session(agent) // 5 messages per visitor: under its 10 a minute
		for range 5 {
			for _, c := range []struct {
				p *page
				v visitor
			}{{pa, va}, {pb, vb}} {
				if sent == 20 {
					break
				}
				if r := c.p.say(c.v, "When do you open?"); r.status != 200 {
					t.Fatalf("message %d: %d %s", sent, r.status, r.body)
				}
				sent++
			}
		}
	}
	for _, p := range []*page{pa, pb} {
		r := p.say(p.session(agent), "When do you open?")
		if r.status != 429 || !strings.Contains(string(r.body), "share") || r.header.Get("Retry-After") == "" {
			t.Fatalf("message 21 of one address: %d %v %s", r.status, r.header, r.body)
		}
	}
	other := newPage(t, b, origin, "127.0.0.2")
	if r := other.say(other.session(agent), "When do you open?"); r.status != 200 {
		t.Fatalf("another address after the first used its share: %d %s", r.status, r.body)
	}
}

// Public answers carry no tool internals: the done event and the history
// show the answer and its citations, never the tool's arguments or result
// (a CRM's JSON); the organization's own API still shows them.
func TestWidgetPublicAnswersHideTools(t *testing.T) {
	model := llmtest.New(t)
	model.Answer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.All(), "tool: ") {
			return llmtest.Reply{Content: "Your order ships on Monday."}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "crm", Arguments: `{"ref":"cust-889-secret-arg"}`}}}
	})
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"customer":"Ana","internalNote":"VIP-7731 credit limit 5000","ships":"Monday"}`)
	}))
	defer crm.Close()
	s := start(t, t.TempDir(), "--llm", "openai", "--llm-url", model.URL, "--llm-model", "scripted", "--webhook-allow-private")
	s.must("POST", "/api/v2/tools/secret", s.Key, nil)
	agent := s.chatAgent(s.Key, map[string]any{"config": map[string]any{"allowedDomains": []string{"shop.example.com"}},
		"tools": []map[string]any{{"id": "t1", "name": "crm", "description": "Read the customer's record", "url": crm.URL, "parameters": lookupParams}}})
	p := newPage(t, s, "https://shop.example.com", "127.0.0.1")
	v := p.session(agent)
	r := p.say(v, "When does my order ship?")
	names, data := sseEvents(r.body)
	if r.status != 200 || len(names) == 0 || names[len(names)-1] != "done" || !strings.Contains(data[len(data)-1], "ships on Monday") {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	hist := p.do("GET", "/api/public/chat/sessions/"+v.conv+"/messages", v.token, nil)
	if hist.status != 200 || !strings.Contains(string(hist.body), "ships on Monday") {
		t.Fatalf("history: %d %s", hist.status, hist.body)
	}
	for what, body := range map[string]string{"done event": data[len(data)-1], "history": string(hist.body)} {
		for _, leak := range []string{"VIP-7731", "cust-889", "toolCalls", "arguments", "result", "usage", `"crm"`} {
			if strings.Contains(body, leak) {
				t.Errorf("the %s shows %q: %s", what, leak, body)
			}
		}
	}
	api := s.must("GET", "/api/v1/conversations/"+v.conv, s.Key, nil)
	if api.status != 200 || !strings.Contains(string(api.body), "VIP-7731") || !strings.Contains(string(api.body), "cust-889-secret-arg") {
		t.Fatalf("the organization's API lost the tool calls: %d %s", api.status, api.body)
	}
}

// Origins are scheme, host and port: a listed host on another port or
// scheme is another site. An unknown agent and another organization's
// agent get the same answer, so a page cannot learn which ids exist.
func TestWidgetOriginsAndExistence(t *testing.T) {
	s := start(t, t.TempDir())
	agent := s.chatAgent(s.Key, map[string]any{"config": map[string]any{"allowedDomains": []string{"shop.example.com"}}})
	check := func(agent string, origins map[string]bool) {
		for origin, ok := range origins {
			p := newPage(t, s, origin, "127.0.0.1")
			cfg := p.do("GET", "/api/public/chat/"+agent+"/config", "", nil)
			sess := p.do("POST", "/api/public/chat/"+agent+"/sessions", "", map[string]any{})
			if ok != (cfg.status == 200) || ok != (sess.status == 201) || !ok && (cfg.status != 403 || sess.status != 403 || sess.header.Get("Access-Control-Allow-Origin") != "") {
				t.Errorf("%s: config %d, session %d %s", origin, cfg.status, sess.status, sess.body)
			}
		}
	}
	check(agent, map[string]bool{
		"https://shop.example.com":     true,
		"https://shop.example.com:443": true,
		"http://shop.example.com":      true,
		"http://shop.example.com:1":    false, // passed on the host alone before
		"https://shop.example.com:444": false,
	})

	keyB := s.newOrg("rival")
	foreign := s.chatAgent(keyB, map[string]any{"name": "Rival", "config": map[string]any{"allowedDomains": []string{"rival.example"}}})
	p := newPage(t, s, "https://shop.example.com", "127.0.0.1")
	for _, c := range []struct{ method, path string }{{"GET", "/config"}, {"POST", "/sessions"}} {
		var got []resp
		for _, id := range []string{foreign, "0b6b2f7e-6f1a-4a53-9a8e-2d7c1f9e4a10"} {
			got = append(got, p.do(c.method, "/api/public/chat/"+id+c.path, "", map[string]any{}))
		}
		if got[0].status != 403 || got[0].status != got[1].status || !bytes.Equal(errorPart(got[0].body), errorPart(got[1].body)) {
			t.Errorf("%s %s: foreign %d %s, unknown %d %s", c.method, c.path, got[0].status, got[0].body, got[1].status, got[1].body)
		}
	}

	// An entry with a scheme and a port allows exactly that origin.
	pay := s.chatAgent(s.Key, map[string]any{"name": "Pay", "config": map[string]any{"allowedDomains": []string{"https://pay.example.com:8443"}}})
	check(pay, map[string]bool{
		"https://pay.example.com:8443": true,
		"https://pay.example.com":      false,
		"http://pay.example.com:8443":  false,
	})
}

// errorPart is an error answer without its timestamp.
func errorPart(b []byte) []byte {
	var m struct{ Error map[string]any }
	json.Unmarshal(b, &m)
	delete(m.Error, "timestamp")
	out, _ := json.Marshal(m.Error)
	return out
}

// A visitor session ends 24 h after its first token: a token renewed past
// that is refused (401: the widget starts a new conversation), however
// fresh its expiry, and a renewal never reaches past it. The old code
// renewed forever. Tokens are forged with the server's key, read from the
// database, to stand in for a day of renewals.
func TestWidgetVisitorLifetime(t *testing.T) {
	s := start(t, t.TempDir())
	agent := s.chatAgent(s.Key, map[string]any{"config": map[string]any{"allowedDomains": []string{"shop.example.com"}}})
	p := newPage(t, s, "https://shop.example.com", "127.0.0.1")
	v := p.session(agent)
	claims := decodeClaims(t, v.token)
	db := dbtest.Open(t, s.db)
	defer db.Close()
	var secret string
	if err := db.QueryRow("SELECT secret FROM widget_secret WHERE id = 1").Scan(&secret); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	forge := func(first int64) string {
		c := map[string]any{"o": claims["o"], "a": claims["a"], "c": claims["c"], "e": now + 3600, "i": first}
		body, _ := json.Marshal(c)
		pl := base64.RawURLEncoding.EncodeToString(body)
		h := hmac.New(sha256.New, []byte(secret))
		h.Write([]byte(pl))
		return pl + "." + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
	}
	hist := func(tok string) resp {
		return p.do("GET", "/api/public/chat/sessions/"+v.conv+"/messages", tok, nil)
	}
	if r := hist(forge(now - 25*3600)); r.status != 401 {
		t.Errorf("a 25 h old session: %d %s", r.status, r.body)
	}
	if r := p.say(visitor{forge(now - 25*3600), v.conv}, "hi"); r.status != 401 {
		t.Errorf("a message in a 25 h old session: %d %s", r.status, r.body)
	}
	young := hist(forge(now - 23*3600))
	if young.status != 200 {
		t.Fatalf("a 23 h old session: %d %s", young.status, young.body)
	}
	tok, _ := dataField(young, "token").(string)
	renewed := decodeClaims(t, tok)
	e, _ := renewed["e"].(float64)
	if i, _ := renewed["i"].(float64); i != float64(now-23*3600) || e > i+24*3600 {
		t.Fatalf("renewed past the session's lifetime: %v", renewed)
	}
}

func decodeClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	pl, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(pl)
	var c map[string]any
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("token %q", token)
	}
	return c
}
