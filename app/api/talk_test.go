package api

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/storage/callstore"
)

// Tones the scripted speech service answers with, so a test can tell the
// first message from the answer by their pitch.
const (
	firstTone  = 440
	answerTone = 1000
	firstWords = "Hello, this is the Lisbon bakery. How can I help?"
	answerText = "We open at eight in the morning."
	question   = "What time do you open?"
)

// talkEnv is agentd with the scripted model and speech services, a chat
// agent with voiceEnabled on a listed site and a voice agent.
type talkEnv struct {
	*widgetEnv
	speech  *speechtest.Server
	voiceID string
	site    string // the listed origin
}

func newTalkEnv(t *testing.T, site string, extra map[string]any) *talkEnv {
	t.Helper()
	sp := speechtest.New(t)
	sp.AnswerSpeech(func(r speechtest.SpeakRequest) speechtest.Speech {
		hz := float64(answerTone)
		if strings.Contains(r.Input, "Lisbon bakery") {
			hz = firstTone
		}
		return speechtest.Speech{Tone: hz, Duration: 900 * time.Millisecond, Rate: dial.SampleRate}
	})
	sp.AnswerTranscripts(func(speechtest.TranscribeRequest) speechtest.Transcript { return speechtest.Transcript{Text: question} })
	cfg := map[string]any{"allowedDomains": []string{site}, "voiceEnabled": true, "firstMessage": firstWords, "endpointingMs": 400}
	for k, v := range extra {
		cfg[k] = v
	}
	w := newWidgetEnv(t, true, cfg, func(c *serveConfig) {
		c.STT = speech.Config{Kind: "openai", URL: sp.URL, Model: "whisper-1"}
		c.TTS = speech.Config{Kind: "openai", URL: sp.URL, Model: "tts-1"}
	})
	w.model.Answer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: answerText} })
	e := &talkEnv{widgetEnv: w, speech: sp, site: site}
	e.voiceID = e.createAgent(e.key, map[string]any{"name": "Ada", "type": "voice", "instructions": "You are the bakery's phone agent.",
		"config": map[string]any{"firstMessage": firstWords, "endpointingMs": 400}})
	return e
}

// dialTalk opens a voice session's WebSocket through the schema-checking
// client.
func (e *testEnv) dialTalk(ctx context.Context, path, key, origin string) (*websocket.Conn, int, []byte) {
	e.t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("x-api-key", key)
	}
	if origin != "" {
		h.Set("Origin", origin)
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+path, &websocket.DialOptions{HTTPClient: e.client, HTTPHeader: h})
	if err != nil {
		if resp == nil {
			e.t.Fatalf("dial %s: %v", path, err)
		}
		var b []byte
		if resp.Body != nil {
			b = make([]byte, 4096)
			n, _ := resp.Body.Read(b)
			b = b[:n]
		}
		return nil, resp.StatusCode, b
	}
	return c, http.StatusSwitchingProtocols, nil
}

// voiceMsg is one server message: a control, or audio (Audio set).
type voiceMsg struct {
	Type        string           `json:"type"`
	CallID      string           `json:"callId"`
	Role        string           `json:"role"`
	Text        string           `json:"text"`
	Interrupted bool             `json:"interrupted"`
	Reason      string           `json:"reason"`
	Turn        dial.TurnLatency `json:"turn"`
	Audio       []int16          `json:"-"`
}

// reader collects a session's messages on a goroutine.
func readSession(ctx context.Context, c *websocket.Conn) <-chan voiceMsg {
	out := make(chan voiceMsg, 4096)
	go func() {
		defer close(out)
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m voiceMsg
			if typ == websocket.MessageBinary {
				m.Type = "audio"
				m.Audio = make([]int16, len(b)/2)
				for i := range m.Audio {
					m.Audio[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
				}
			} else if json.Unmarshal(b, &m) != nil {
				m.Type = "garbage"
			}
			out <- m
		}
	}()
	return out
}

// pitch is a frame's frequency from its zero crossings (0 for silence).
func pitch(pcm []int16) int {
	if speechtest.RMS(pcm) < 300 {
		return 0
	}
	n := 0
	for i := 1; i < len(pcm); i++ {
		if (pcm[i-1] < 0) != (pcm[i] < 0) {
			n++
		}
	}
	return n * dial.SampleRate / (2 * len(pcm))
}

// sendAudio sends pcm in 20 ms frames at the real pace, until the
// session ends.
func sendAudio(ctx context.Context, c *websocket.Conn, pcm []int16) error {
	tk := time.NewTicker(dial.FrameDuration)
	defer tk.Stop()
	for off := 0; off < len(pcm); off += dial.FrameSamples {
		f := pcm[off:min(off+dial.FrameSamples, len(pcm))]
		b := make([]byte, 2*len(f))
		for i, v := range f {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
		if err := c.Write(ctx, websocket.MessageBinary, b); err != nil {
			return err
		}
		<-tk.C
	}
	return nil
}

// converse runs one session: the first message plays, the caller asks,
// the answer plays. It returns the call's id and the messages seen.
func converse(ctx context.Context, t *testing.T, c *websocket.Conn) (string, []voiceMsg) {
	t.Helper()
	msgs := readSession(ctx, c)
	var seen []voiceMsg
	next := func(what string, ok func(voiceMsg) bool) voiceMsg {
		t.Helper()
		for {
			select {
			case m, open := <-msgs:
				if !open {
					t.Fatalf("session closed waiting for %s; saw %d messages: %+v", what, len(seen), seen)
				}
				seen = append(seen, m)
				if ok(m) {
					return m
				}
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
		}
	}
	ready := next("ready", func(m voiceMsg) bool { return m.Type == "ready" })
	next("the first message's audio", func(m voiceMsg) bool { return pitch(m.Audio) > 300 && pitch(m.Audio) < 600 })
	next("the first message's line", func(m voiceMsg) bool { return m.Type == "line" && m.Role == "agent" })
	// The caller speaks once the agent is done: speech, then silence for
	// the end of the turn.
	speech := speechtest.Espeak(t, question, dial.SampleRate)
	go func() {
		for _, pcm := range [][]int16{make([]int16, dial.SampleRate/2), speech, make([]int16, 3*dial.SampleRate)} {
			if sendAudio(ctx, c, pcm) != nil {
				return
			}
		}
	}()
	next("the caller's line", func(m voiceMsg) bool { return m.Type == "line" && m.Role == "user" })
	next("the answer's audio", func(m voiceMsg) bool { return pitch(m.Audio) > 800 })
	next("the answer's line", func(m voiceMsg) bool { return m.Type == "line" && m.Role == "agent" && m.Text == answerText })
	next("the answer's latency", func(m voiceMsg) bool { return m.Type == "latency" && m.Turn.VoiceToVoiceMs > 0 })
	return ready.CallID, seen
}

// The dashboard's path without a browser: an API key's WebSocket to a
// voice agent hears the first message, then the answer to what it said;
// the call record (direction web) holds both sides and the latency.
func TestTalkDashboardSession(t *testing.T) {
	e := newTalkEnv(t, "http://localhost:8123", nil)
	if code, _, b := e.do("PUT", "/api/v1/agents/"+e.voiceID+"/analysis-plan", e.key,
		map[string]any{"analysisPlan": map[string]any{"summary": map[string]any{"enabled": true}}}); code != 200 {
		t.Fatalf("analysis plan: %d %s", code, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, code, b := e.dialTalk(ctx, "/api/v2/agents/"+e.voiceID+"/talk", e.key, "")
	if code != 101 {
		t.Fatalf("talk: %d %s", code, b)
	}
	id, _ := converse(ctx, t, c)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"hangup"}`)); err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	call := e.waitCallEnded(id)
	if call.Direction != "web" || call.Status != "completed" {
		t.Fatalf("call: direction %q status %q", call.Direction, call.Status)
	}
	if !call.said("agent", firstWords) || !call.said("user", question) || !call.said("agent", answerText) {
		t.Fatalf("transcript: %+v", call.Transcript)
	}
	if call.Latency == nil || len(call.Latency.Turns) != 1 || call.Latency.VoiceToVoiceP50Ms <= 0 {
		t.Fatalf("latency: %+v", call.Latency)
	}
	// Recorded like a phone call: a WAV, caller left, agent right.
	if code, h, b := e.do("GET", "/api/v1/calls/"+id+"/recording", e.key, nil); code != 200 ||
		h.Get("Content-Type") != "audio/wav" || len(b) < 44+4*dial.SampleRate {
		t.Fatalf("recording: %d %s, %d bytes", code, h.Get("Content-Type"), len(b))
	}
	// The post-call analysis takes it as any ended call with a transcript
	// (queued: the scripted model answers it later or not at all).
	if code, _, b := e.do("GET", "/api/v1/calls/"+id+"/analysis", e.key, nil); code != 200 {
		t.Fatalf("analysis: %d %s", code, b)
	}
	// Listed on the Calls page's API with its direction.
	var list struct {
		Data struct {
			Calls []struct {
				ID        string `json:"id"`
				Direction string `json:"direction"`
			} `json:"calls"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v1/calls?direction=web", e.key, nil, &list); code != 200 || len(list.Data.Calls) != 1 || list.Data.Calls[0].ID != id {
		t.Fatalf("calls?direction=web: %d %+v", code, list)
	}
}

// webCall is what the tests read of a call record.
type webCall struct {
	ID         string `json:"id"`
	Direction  string `json:"direction"`
	Status     string `json:"status"`
	Reason     string `json:"failure_reason"`
	Transcript []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"transcript"`
	Latency *struct {
		Turns             []dial.TurnLatency `json:"turns"`
		VoiceToVoiceP50Ms int64              `json:"voiceToVoiceP50Ms"`
	} `json:"latency"`
}

func (c webCall) said(role, text string) bool {
	for _, l := range c.Transcript {
		if l.Role == role && l.Text == text {
			return true
		}
	}
	return false
}

// waitCallEnded reads the call until it has ended.
func (e *testEnv) waitCallEnded(id string) webCall {
	e.t.Helper()
	var c webCall
	deadline := time.Now().Add(15 * time.Second)
	for {
		var out struct {
			Data webCall `json:"data"`
		}
		if code := e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &out); code != 200 {
			e.t.Fatalf("GET call: %d", code)
		}
		c = out.Data
		if c.Status != "active" {
			return c
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("call %s still active", id)
		}
		<-time.After(50 * time.Millisecond)
	}
}

// The widget's path without a browser: a visitor's WebSocket from the
// listed page hears the first message and the answer; the call record
// names the widget conversation.
func TestTalkWidgetSession(t *testing.T) {
	site := "http://localhost:8123"
	e := newTalkEnv(t, site, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws := e.widgetSession(e.agentID, site)
	c, code, b := e.dialTalk(ctx, "/api/public/chat/sessions/"+ws.ConversationID+"/voice?token="+ws.Token, "", site)
	if code != 101 {
		t.Fatalf("voice: %d %s", code, b)
	}
	id, _ := converse(ctx, t, c)
	c.Close(websocket.StatusNormalClosure, "")
	call := e.waitCallEnded(id)
	if call.Direction != "web" || !call.said("user", question) || !call.said("agent", answerText) {
		t.Fatalf("call: %+v", call)
	}
}

// Refusals come before the upgrade as the family's JSON errors: no key
// 401, another organization's agent 404 (tenant isolation), a chat agent
// without voiceEnabled 403; for the widget an unlisted origin 403, a
// voice-disabled agent 403, a forged token 401, another conversation 403,
// the day's voice minutes used 429 with Retry-After; one session at a
// time per conversation.
func TestTalkRefusals(t *testing.T) {
	site := "http://localhost:8123"
	e := newTalkEnv(t, site, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, otherKey := e.newOrg("other")
	plain := e.createAgent(e.key, map[string]any{"name": "Texty", "type": "chat", "instructions": "Be brief.",
		"config": map[string]any{"allowedDomains": []string{site}}})
	talk := func(agent, key string) (int, []byte) {
		c, code, b := e.dialTalk(ctx, "/api/v2/agents/"+agent+"/talk", key, "")
		if c != nil {
			c.CloseNow()
		}
		return code, b
	}
	for _, tc := range []struct {
		name, agent, key string
		want             int
	}{
		{"no key", e.voiceID, "", 401},
		{"another organization's agent", e.voiceID, otherKey, 404},
		{"unknown agent", "00000000-0000-0000-0000-000000000000", e.key, 404},
		{"chat agent without voiceEnabled", plain, e.key, 403},
	} {
		if code, b := talk(tc.agent, tc.key); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, b, tc.want)
		}
	}
	// A page elsewhere cannot ride a member's credentials: the socket's
	// Origin must be the server's.
	if c, code, _ := e.dialTalk(ctx, "/api/v2/agents/"+e.voiceID+"/talk", e.key, "http://evil.example"); c != nil || code != 403 {
		t.Errorf("dashboard socket from another origin: %d", code)
	}
	var list struct {
		Data struct {
			Calls []any `json:"calls"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v1/calls", e.key, nil, &list); code != 200 || len(list.Data.Calls) != 0 {
		t.Fatalf("refusals recorded calls: %d %v", code, list.Data.Calls)
	}

	ws := e.widgetSession(e.agentID, site)
	path := "/api/public/chat/sessions/" + ws.ConversationID + "/voice?token="
	voice := func(path, origin string) (int, []byte) {
		c, code, b := e.dialTalk(ctx, path, "", origin)
		if c != nil {
			c.CloseNow()
		}
		return code, b
	}
	if code, b := voice(path+ws.Token, "http://127.0.0.1:8123"); code != 403 {
		t.Errorf("unlisted origin: %d %s", code, b)
	}
	if code, b := voice(path+"forged."+ws.Token, site); code != 401 {
		t.Errorf("forged token: %d %s", code, b)
	}
	other := e.widgetSession(e.agentID, site)
	if code, b := voice("/api/public/chat/sessions/"+other.ConversationID+"/voice?token="+ws.Token, site); code != 403 {
		t.Errorf("another conversation: %d %s", code, b)
	}
	pws := e.widgetSession(plain, site)
	if code, b := voice("/api/public/chat/sessions/"+pws.ConversationID+"/voice?token="+pws.Token, site); code != 403 || !strings.Contains(string(b), "voice is not enabled") {
		t.Errorf("voice-disabled agent: %d %s", code, b)
	}
	// A plain GET is not a session: 400 in the API's shape, and the
	// conversation's one slot is not held by it.
	if code, _, b := e.pub("GET", path+ws.Token, site, "", nil); code != 400 || !strings.Contains(string(b), "WebSocket") {
		t.Errorf("plain GET: %d %s", code, b)
	}
	if code, _, b := e.do("GET", "/api/v2/agents/"+e.voiceID+"/talk", e.key, nil); code != 400 {
		t.Errorf("plain GET of the dashboard's: %d %s", code, b)
	}
	// One session at a time per conversation.
	c, code, b := e.dialTalk(ctx, path+ws.Token, "", site)
	if code != 101 {
		t.Fatalf("voice: %d %s", code, b)
	}
	if code, b := voice(path+ws.Token, site); code != 429 {
		t.Errorf("a second session in the conversation: %d %s", code, b)
	}
	c.Close(websocket.StatusNormalClosure, "")
	// The day's voice minutes: an hour of web calls today uses them up.
	now := time.Unix(0, e.clock.Load())
	prior, err := e.db.Calls.StartWebCall(ctx, callstore.Call{OrgID: e.orgID, AgentID: e.agentID, PhoneNumber: "widget visitor"}, now.Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.Calls.EndWebCall(ctx, prior.ID, "completed", "", now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, b := voice(path+ws.Token, site)
		if code == 429 && strings.Contains(string(b), "voice minutes") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("voice minutes used: %d %s", code, b)
		}
		<-time.After(50 * time.Millisecond) // the first session's slot is freed when it has ended
	}
}

// The server's shutdown ends a running session (a hijacked connection the
// HTTP server does not wait for): the browser gets end, and the call
// record is closed while the database is open.
func TestTalkShutdown(t *testing.T) {
	e := newTalkEnv(t, "http://localhost:8123", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, code, b := e.dialTalk(ctx, "/api/v2/agents/"+e.voiceID+"/talk", e.key, "")
	if code != 101 {
		t.Fatalf("talk: %d %s", code, b)
	}
	defer c.CloseNow()
	msgs := readSession(ctx, c)
	var id string
	for m := range msgs {
		if m.Type == "ready" {
			id = m.CallID
			break
		}
	}
	e.app.srv.Shutdown()
	ended := false
	for m := range msgs {
		if m.Type == "end" {
			ended = true
		}
	}
	if !ended {
		t.Fatal("the session closed without end")
	}
	var out struct {
		Data webCall `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &out); code != 200 || out.Data.Status != "completed" {
		t.Fatalf("call after shutdown: %d %+v", code, out.Data)
	}
}

// Barge-in through the browser path: the caller speaks over a long first
// message; agentd drops the agent's queued audio and tells the browser to
// drop what it buffered (clear), and the transcript keeps the first
// message marked interrupted.
func TestTalkBargeIn(t *testing.T) {
	e := newTalkEnv(t, "http://localhost:8123", nil)
	e.speech.PushSpeech(speechtest.Speech{Tone: firstTone, Duration: 6 * time.Second, Rate: dial.SampleRate})
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	c, code, b := e.dialTalk(ctx, "/api/v2/agents/"+e.voiceID+"/talk", e.key, "")
	if code != 101 {
		t.Fatalf("talk: %d %s", code, b)
	}
	defer c.CloseNow()
	msgs := readSession(ctx, c)
	var id string
	started := false
	for m := range msgs {
		if m.Type == "ready" {
			id = m.CallID
		}
		if m.Type == "audio" && pitch(m.Audio) > 300 {
			started = true
			break
		}
	}
	if !started {
		t.Fatal("no first message")
	}
	go func() {
		for _, pcm := range [][]int16{make([]int16, dial.SampleRate/2), speechtest.Espeak(t, question, dial.SampleRate), make([]int16, 3*dial.SampleRate)} {
			if sendAudio(ctx, c, pcm) != nil {
				return
			}
		}
	}()
	cleared, interrupted := false, false
	for m := range msgs {
		switch {
		case m.Type == "clear":
			cleared = true
		case m.Type == "line" && m.Role == "agent" && m.Interrupted:
			interrupted = true
		}
		if cleared && interrupted {
			break
		}
	}
	if !cleared || !interrupted {
		t.Fatalf("barge-in: clear %v, interrupted line %v", cleared, interrupted)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if call := e.waitCallEnded(id); len(call.Transcript) == 0 || call.Transcript[0].Role != "agent" {
		t.Fatalf("transcript: %+v", call.Transcript)
	}
}
