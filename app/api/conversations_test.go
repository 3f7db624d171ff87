package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/internal/signing"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// convEnv is agentd with the scripted model (or builtin when model is nil),
// one collection holding two sources, and a chat agent answering from it.
type convEnv struct {
	*testEnv
	model   *llmtest.Server
	col     string
	agentID string
}

const (
	hoursText  = "# Opening hours\n\nThe Lisbon bakery opens at 7:00 and closes at 19:00 from Monday to Saturday. On Sundays it is closed."
	returnText = "# Returns\n\nUnopened pastries can be returned within two days with the receipt for a full refund."
)

func newConvEnv(t *testing.T, scripted bool, agent map[string]any, extra ...func(*serveConfig)) *convEnv {
	t.Helper()
	var model *llmtest.Server
	opts := []func(*serveConfig){func(c *serveConfig) { c.Webhooks.AllowPrivate = true; c.Webhooks.Disabled = true }}
	if scripted {
		model = llmtest.New(t)
		opts = append(opts, func(c *serveConfig) {
			c.LLM = llm.Config{Kind: "openai", URL: model.URL, Model: "scripted", Timeout: 2 * time.Second}
		})
	}
	e := &convEnv{testEnv: newTestEnv(t, append(opts, extra...)...), model: model}
	e.col = e.createCollection(e.key, "faq")
	for _, s := range []map[string]any{
		{"collectionId": e.col, "externalId": "hours", "title": "Opening hours", "content": hoursText},
		{"collectionId": e.col, "externalId": "returns", "title": "Returns", "content": returnText},
	} {
		if code, out := upsert(e.testEnv, e.key, s); code != 200 && code != 201 && code != 202 {
			t.Fatalf("upsert: %d %v", code, out)
		}
	}
	e.waitProcessed(e.key, e.col)
	body := map[string]any{"name": "Baker", "type": "chat", "instructions": "You are the Lisbon bakery's assistant. Be brief.",
		"knowledge": map[string]any{"collectionIds": []string{e.col}, "topK": 3}}
	for k, v := range agent {
		body[k] = v
	}
	e.agentID = e.createAgent(e.key, body)
	return e
}

func (e *testEnv) createAgent(key string, body map[string]any) string {
	e.t.Helper()
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if code := e.doJSON("POST", "/api/v1/agents", key, body, &out); code != 201 {
		_, _, b := e.do("POST", "/api/v1/agents", key, body)
		e.t.Fatalf("create agent: %d %s", code, b)
	}
	return out.Data.ID
}

type convMessage struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	Citations []struct {
		SourceID   string `json:"sourceId"`
		ExternalID string `json:"externalId"`
		Title      string `json:"title"`
		Text       string `json:"text"`
	} `json:"citations"`
	ToolCalls []struct {
		ID, Name, Arguments, Result string
	} `json:"toolCalls"`
	Usage *llm.Usage `json:"usage"`
}

type convView struct {
	ID           string        `json:"id"`
	AgentID      string        `json:"agentId"`
	Status       string        `json:"status"`
	Channel      string        `json:"channel"`
	CallID       *string       `json:"callId"`
	MessageCount int           `json:"messageCount"`
	Messages     []convMessage `json:"messages"`
}

func (e *testEnv) startConversation(key, agentID string) string {
	e.t.Helper()
	var out struct{ Data convView }
	if code := e.doJSON("POST", "/api/v1/conversations", key, map[string]any{"agentId": agentID, "metadata": map[string]any{"page": "/faq"}}, &out); code != 201 {
		e.t.Fatalf("start conversation: %d", code)
	}
	return out.Data.ID
}

func (e *testEnv) say(key, convID, content string) (int, convMessage, []byte) {
	e.t.Helper()
	code, _, b := e.do("POST", "/api/v1/conversations/"+convID+"/messages", key, map[string]any{"content": content})
	var out struct {
		Data struct {
			Message convMessage `json:"message"`
		} `json:"data"`
	}
	json.Unmarshal(b, &out)
	return code, out.Data.Message, b
}

func (e *testEnv) conversation(key, id string) convView {
	e.t.Helper()
	var out struct{ Data convView }
	if code := e.doJSON("GET", "/api/v1/conversations/"+id, key, nil, &out); code != 200 {
		e.t.Fatalf("get conversation: %d", code)
	}
	return out.Data
}

// The agent's instructions and the numbered passages of its collection
// reach the model; the passage the answer cites as [1] is its citation,
// and only that one; the answer and usage are stored.
func TestConversationModelTurn(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Push(llmtest.Reply{Content: "We open at 7:00 [1].", PromptTokens: 120, CompletionTokens: 5})
	id := e.startConversation(e.key, e.agentID)
	code, m, b := e.say(e.key, id, "When does the bakery open?")
	if code != 200 || m.Content != "We open at 7:00 [1]." || m.Role != "assistant" {
		t.Fatalf("answer: %d %s", code, b)
	}
	got := e.model.Last()
	if !got.Stream || got.Messages[0].Role != "system" || !strings.Contains(got.Messages[0].Text(), "Lisbon bakery's assistant") {
		t.Fatalf("system prompt did not carry the instructions: %+v", got.Messages)
	}
	if !strings.Contains(got.Messages[0].Text(), "opens at 7:00") || !strings.Contains(got.Messages[0].Text(), `title="Opening hours"`) {
		t.Fatalf("the passage is not in the prompt: %s", got.Messages[0].Text())
	}
	if last := got.Messages[len(got.Messages)-1]; last.Role != "user" || last.Text() != "When does the bakery open?" {
		t.Fatalf("last message %+v", last)
	}
	if sys := got.Messages[0].Text(); !strings.Contains(sys, `<passage n="1" `) || !strings.Contains(sys, "like [1]") {
		t.Fatalf("passages not numbered: %s", sys)
	}
	if len(m.Citations) != 1 || m.Citations[0].ExternalID != "hours" || !strings.Contains(m.Citations[0].Text, "7:00") {
		t.Fatalf("citations %+v", m.Citations)
	}
	// Two passages in the prompt, the answer cites the second: only it is listed.
	e.model.Push(llmtest.Reply{Content: "Returns within 30 days [2]."})
	code, m2, b := e.say(e.key, e.startConversation(e.key, e.agentID), "Opening hours and returns: when do you open, and can I return bread?")
	sys := e.model.Last().Messages[0].Text()
	second := sys[strings.Index(sys, `<passage n="2" `)+1:]
	if code != 200 || !strings.Contains(sys, `<passage n="1" `) || !strings.Contains(sys, `<passage n="2" `) || len(m2.Citations) != 1 ||
		!strings.Contains(second[:strings.Index(second, ">")], `title="`+m2.Citations[0].Title+`"`) {
		t.Fatalf("cited [2]: %d %s\nprompt: %s", code, b, sys)
	}
	if m.Usage == nil || m.Usage.PromptTokens != 120 || m.Usage.CompletionTokens != 5 {
		t.Fatalf("usage %+v", m.Usage)
	}
	// The second turn carries the first as history.
	e.model.Push(llmtest.Reply{Content: "No, closed on Sundays."})
	if code, _, b := e.say(e.key, id, "And on Sundays?"); code != 200 {
		t.Fatalf("second turn: %d %s", code, b)
	}
	all := e.model.Last().All()
	if !strings.Contains(all, "user: When does the bakery open?") || !strings.Contains(all, "assistant: We open at 7:00 [1].") {
		t.Fatalf("history missing: %s", all)
	}
	v := e.conversation(e.key, id)
	if v.MessageCount != 4 || len(v.Messages) != 4 || v.Messages[0].Role != "user" || v.Messages[3].Content != "No, closed on Sundays." {
		t.Fatalf("stored conversation %+v", v)
	}
	if n := len(v.Messages[3].Citations); n != 0 { // it cites no passage: it used none
		t.Fatalf("an answer citing nothing lists %d citations", n)
	}
}

// An upstream 500, a dropped stream and a slow model answer 502, 502 and
// 504 naming the model service, and store nothing of the failed turn.
func TestConversationUpstreamFailures(t *testing.T) {
	e := newConvEnv(t, true, nil)
	id := e.startConversation(e.key, e.agentID)
	for _, c := range []struct {
		name  string
		reply llmtest.Reply
		code  int
		msg   string
	}{
		{"500", llmtest.Reply{Status: 500}, 502, "model service openai at 127.0.0.1"},
		{"503", llmtest.Reply{Status: 503}, 502, "(scripted) answered HTTP 503"},
		{"401", llmtest.Reply{Status: 401}, 502, "(scripted) answered HTTP 401"},
		{"504", llmtest.Reply{Status: 504}, 504, "(scripted) answered HTTP 504"},
		{"dropped", llmtest.Reply{Content: "We open at seven and close", DropAfter: 2}, 502, "unavailable"},
		{"slow", llmtest.Reply{Content: "late", Delay: 5 * time.Second}, 504, "did not answer in time"},
	} {
		e.model.Push(c.reply)
		code, _, b := e.say(e.key, id, "When does the bakery open?")
		if code != c.code || !strings.Contains(string(b), c.msg) || strings.Contains(string(b), "scripted failure") {
			t.Errorf("%s: %d %s", c.name, code, b)
		}
	}
	if v := e.conversation(e.key, id); v.MessageCount != 0 || len(v.Messages) != 0 {
		t.Fatalf("a failed turn stored messages: %+v", v)
	}
	// The model is back: the conversation goes on.
	e.model.Push(llmtest.Reply{Content: "7:00."})
	if code, m, b := e.say(e.key, id, "When?"); code != 200 || m.Content != "7:00." {
		t.Fatalf("after recovery: %d %s", code, b)
	}
}

// A url tool is called signed (Standard Webhooks, the organization's tools
// secret) with the model's arguments; its answer reaches the model.
func TestConversationURLTool(t *testing.T) {
	var mu sync.Mutex
	var gotBody []byte
	var gotHeader http.Header
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotBody, gotHeader = b, r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"reserved","table":12}`)
	}))
	defer tool.Close()
	e := newConvEnv(t, true, map[string]any{"tools": []map[string]any{{"id": "t1", "name": "book_table", "description": "Book a table",
		"url": tool.URL + "/book", "parameters": map[string]any{"type": "object", "properties": map[string]any{"people": map[string]any{"type": "integer"}}}}}})
	var secret struct {
		Data struct {
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if code := e.doJSON("POST", "/api/v2/tools/secret", e.key, nil, &secret); code != 200 || !strings.HasPrefix(secret.Data.Secret, "whsec_") {
		t.Fatalf("rotate tools secret: %d %+v", code, secret)
	}
	e.model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "book_table", Arguments: `{"people": 4}`}}},
		llmtest.Reply{Content: "Table 12 is yours."})
	id := e.startConversation(e.key, e.agentID)
	code, m, b := e.say(e.key, id, "Book a table for four")
	if code != 200 || m.Content != "Table 12 is yours." {
		t.Fatalf("answer: %d %s", code, b)
	}
	if len(e.model.Got()) < 2 || !slicesContains(e.model.Got()[0].ToolNames(), "book_table") {
		t.Fatalf("tool not offered: %+v", e.model.Got())
	}
	second := e.model.Last()
	toolMsg := second.Messages[len(second.Messages)-1]
	if toolMsg.Role != "tool" || toolMsg.ToolCallID != "call_1" || !strings.Contains(toolMsg.Text(), `"table":12`) {
		t.Fatalf("the tool's result did not reach the model: %+v", second.Messages)
	}
	mu.Lock()
	defer mu.Unlock()
	var req map[string]any
	json.Unmarshal(gotBody, &req)
	args, _ := req["arguments"].(map[string]any)
	if req["toolCallId"] != "call_1" || req["name"] != "book_table" || req["agentId"] != e.agentID || req["conversationId"] != id || args["people"] != 4.0 {
		t.Fatalf("tool request %s", gotBody)
	}
	ts, _ := strconv.ParseInt(gotHeader.Get("webhook-timestamp"), 10, 64)
	want := signing.Sign(gotHeader.Get("webhook-id"), time.Unix(ts, 0), gotBody, secret.Data.Secret)
	if gotHeader.Get("webhook-signature") == "" || gotHeader.Get("webhook-signature") != want {
		t.Fatalf("signature %q, want %q", gotHeader.Get("webhook-signature"), want)
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "book_table" || !strings.Contains(m.ToolCalls[0].Result, "reserved") {
		t.Fatalf("stored tool calls %+v", m.ToolCalls)
	}
}

func slicesContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Streaming: delta events as the model writes, then done with the whole
// message; the stream's text is the stored answer.
func TestConversationStream(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Push(llmtest.Reply{Content: "We open at seven in the morning."})
	id := e.startConversation(e.key, e.agentID)
	code, h, b := e.do("POST", "/api/v1/conversations/"+id+"/messages", e.key, map[string]any{"content": "When do you open?", "stream": true})
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", code, b)
	}
	evs := readSSE(t, b)
	var text strings.Builder
	deltas := 0
	for _, ev := range evs[:len(evs)-1] {
		if ev.name != "delta" {
			t.Fatalf("event %q before done", ev.name)
		}
		var d struct{ Content string }
		json.Unmarshal([]byte(ev.data), &d)
		text.WriteString(d.Content)
		deltas++
	}
	last := evs[len(evs)-1]
	var done struct{ Message convMessage }
	json.Unmarshal([]byte(last.data), &done)
	if last.name != "done" || deltas < 3 || text.String() != "We open at seven in the morning." || done.Message.Content != text.String() {
		t.Fatalf("events %+v", evs)
	}
	// A failure mid-stream ends with an error event and stores nothing.
	e.model.Push(llmtest.Reply{Content: "one two three four", DropAfter: 2})
	_, _, b = e.do("POST", "/api/v1/conversations/"+id+"/messages", e.key, map[string]any{"content": "Again?", "stream": true})
	evs = readSSE(t, b)
	if evs[len(evs)-1].name != "error" || !strings.Contains(evs[len(evs)-1].data, "unavailable") {
		t.Fatalf("mid-stream failure: %+v", evs)
	}
	if v := e.conversation(e.key, id); v.MessageCount != 2 {
		t.Fatalf("stored %d messages, want the first turn's 2", v.MessageCount)
	}
}

type sseEvent struct{ name, data string }

func readSSE(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	if len(out) == 0 {
		t.Fatalf("no events in %q", b)
	}
	return out
}

// builtin: a question answered by a source quotes it with its title and
// cites it; a question the knowledge does not answer gets the fallback and
// no citation.
func TestConversationBuiltin(t *testing.T) {
	e := newConvEnv(t, false, nil)
	id := e.startConversation(e.key, e.agentID)
	code, m, b := e.say(e.key, id, "When does the bakery open on Monday?")
	if code != 200 || !strings.Contains(m.Content, `From "Opening hours"`) || !strings.Contains(m.Content, "opens at 7:00") {
		t.Fatalf("answer: %d %s", code, b)
	}
	if len(m.Citations) == 0 || m.Citations[0].ExternalID != "hours" {
		t.Fatalf("citations %+v", m.Citations)
	}
	code, m, b = e.say(e.key, id, "Quantum chromodynamics gluon lattice?")
	if code != 200 || m.Content != "I don't have information about that." || len(m.Citations) != 0 {
		t.Fatalf("no answer: %d %s", code, b)
	}
	// The fallback is the agent's own when set.
	other := e.createAgent(e.key, map[string]any{"name": "B2", "type": "chat", "fallback": "Ask at the counter.",
		"knowledge": map[string]any{"collectionIds": []string{e.col}}})
	id2 := e.startConversation(e.key, other)
	if _, m, _ := e.say(e.key, id2, "Quantum chromodynamics gluon lattice?"); m.Content != "Ask at the counter." {
		t.Fatalf("own fallback: %+v", m)
	}
}

// Ending a conversation writes conversation.ended with the transcript;
// an ended conversation takes no more messages (409); an inactive agent
// answers 409.
func TestConversationEndAndEvents(t *testing.T) {
	e := newConvEnv(t, false, nil)
	id := e.startConversation(e.key, e.agentID)
	e.say(e.key, id, "When does the bakery open?")
	var ended struct{ Data convView }
	if code := e.doJSON("POST", "/api/v1/conversations/"+id+"/end", e.key, nil, &ended); code != 200 || ended.Data.Status != "ended" {
		t.Fatalf("end: %d %+v", code, ended)
	}
	if code, _, b := e.say(e.key, id, "Hello?"); code != 409 {
		t.Fatalf("message after end: %d %s", code, b)
	}
	var evs struct {
		Data struct {
			Events []struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			} `json:"events"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v2/events?type=conversation.started&type=conversation.ended", e.key, nil, &evs); code != 200 {
		t.Fatalf("events: %d", code)
	}
	types := []string{}
	var transcript convView
	for _, ev := range evs.Data.Events {
		types = append(types, ev.Type)
		if ev.Type == "conversation.ended" {
			json.Unmarshal(ev.Data, &transcript)
		}
	}
	if strings.Join(types, ",") != "conversation.started,conversation.ended" || len(transcript.Messages) != 2 ||
		!strings.Contains(transcript.Messages[1].Content, "7:00") {
		t.Fatalf("events %v transcript %+v", types, transcript)
	}
	if code := e.doJSON("DELETE", "/api/v1/agents/"+e.agentID, e.key, nil, nil); code != 200 {
		t.Fatalf("delete agent: %d", code)
	}
	if code, _, b := e.do("POST", "/api/v1/conversations", e.key, map[string]any{"agentId": e.agentID}); code != 409 {
		t.Fatalf("inactive agent: %d %s", code, b)
	}
}

// Listing filters by agent and status; bad input is 400 and changes nothing.
func TestConversationListAndValidation(t *testing.T) {
	e := newConvEnv(t, false, nil)
	a := e.startConversation(e.key, e.agentID)
	e.startConversation(e.key, e.agentID)
	e.doJSON("POST", "/api/v1/conversations/"+a+"/end", e.key, nil, nil)
	var l struct {
		Data struct {
			Conversations []convView `json:"conversations"`
			Total         int        `json:"total"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v1/conversations?status=ended&agentId="+e.agentID, e.key, nil, &l); code != 200 || l.Data.Total != 1 || l.Data.Conversations[0].ID != a {
		t.Fatalf("list: %d %+v", code, l)
	}
	for _, c := range []struct {
		method, path string
		body         any
		code         int
	}{
		{"POST", "/api/v1/conversations", map[string]any{}, 400},
		{"POST", "/api/v1/conversations", map[string]any{"agentId": e.agentID, "metadata": []int{1}}, 400},
		{"POST", "/api/v1/conversations", "{", 400},
		{"POST", "/api/v1/conversations", map[string]any{"agentId": "nope"}, 404},
		{"GET", "/api/v1/conversations?limit=0", nil, 400},
		{"GET", "/api/v1/conversations?status=open", nil, 400},
		{"POST", "/api/v1/conversations/" + a + "/messages", map[string]any{"content": " "}, 400},
		{"POST", "/api/v1/conversations/nope/messages", map[string]any{"content": "hi"}, 404},
		{"POST", "/api/v1/conversations/nope/end", nil, 404},
		{"GET", "/api/v1/conversations/nope", nil, 404},
	} {
		if code, _, b := e.do(c.method, c.path, e.key, c.body); code != c.code {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, b, c.code)
		}
	}
	if code := e.doJSON("GET", "/api/v1/conversations", e.key, nil, &l); code != 200 || l.Data.Total != 2 {
		t.Fatalf("bad input changed something: %+v", l)
	}
	// A viewer reads but does not write.
	viewer := e.keyWithRole(e.orgID, "viewer", access.KeyOptions{})
	if code, _, _ := e.do("GET", "/api/v1/conversations", viewer, nil); code != 200 {
		t.Fatalf("viewer read: %d", code)
	}
	if code, _, _ := e.do("POST", "/api/v1/conversations", viewer, map[string]any{"agentId": e.agentID}); code != 403 {
		t.Fatalf("viewer write: %d", code)
	}
	member := e.keyWithRole(e.orgID, "member", access.KeyOptions{})
	if code, _, _ := e.do("POST", "/api/v2/tools/secret", member, nil); code != 403 {
		t.Fatalf("a member rotated the tools secret: %d", code)
	}
}
