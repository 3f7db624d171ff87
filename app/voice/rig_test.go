package voice

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/eventstore"
)

// rig is one voice call end to end: the real stores (SQLite, or
// PostgreSQL with AGENTD_TEST_POSTGRES), the conversation engine on the
// scripted model, scripted speech and the in-memory transport.
type rig struct {
	t      testing.TB
	db     *storage.Stores
	org    string
	agent  string
	call   string
	model  *llmtest.Server
	speech *speechtest.Server
	svc    *Service
	media  *testMedia
	cfg    Config
	maxDur time.Duration
	xfer   dial.Transfer // the session's (nil: none)
}

func newRig(t testing.TB, config map[string]any, callMeta map[string]any) *rig {
	t.Helper()
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	cj, _ := json.Marshal(config)
	a, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: org, Name: "Ada", Type: "voice", Status: "active",
		Instructions: "You are Ada, the bakery's phone agent.", Config: cj, PhoneNumbers: []string{"+14155550001"}})
	if err != nil {
		t.Fatal(err)
	}
	var cm json.RawMessage
	if callMeta != nil {
		cm, _ = json.Marshal(callMeta)
	}
	now := time.Now()
	calls, err := db.Calls.CreateCalls(ctx, []callstore.Call{{OrgID: org, AgentID: a.ID, Status: callstore.CallQueued,
		PhoneNumber: "+14155550100", CallerID: "+14155550001", DueAt: now, StartedAt: &now,
		Metadata: json.RawMessage(`{}`), CallMetadata: cm}})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, db: db, org: org, agent: a.ID, call: calls[0].ID, model: llmtest.New(t),
		speech: speechtest.New(t), media: newTestMedia(t),
		cfg: Config{STTBudget: time.Second, ModelBudget: 2 * time.Second, TTSBudget: time.Second, DigitGap: 300 * time.Millisecond}}
	// The agent's speech: a 440 Hz tone, 200 ms a word, at 8 kHz (exact
	// lengths for the tests' sums).
	r.speech.AnswerSpeech(func(req speechtest.SpeakRequest) speechtest.Speech {
		return speechtest.Speech{Tone: 440, Duration: time.Duration(len(strings.Fields(req.Input))) * wordDuration, Rate: dial.SampleRate}
	})
	return r
}

const wordDuration = 200 * time.Millisecond

// wordSamples is the agent's audio for one word.
const wordSamples = int(wordDuration * dial.SampleRate / time.Second)

// build makes the loop over the rig's services.
func (r *rig) build(m Metrics) {
	t := r.t
	model, err := llm.New(llm.Config{Kind: "openai", URL: r.model.URL, Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := conversations.New(conversations.Deps{Agents: r.db.Agents, Store: r.db.Conversations}, conversations.Config{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	stt, err := speech.NewSTT(speech.Config{Kind: "openai", URL: r.speech.URL, Model: "whisper-1"})
	if err != nil {
		t.Fatal(err)
	}
	tts, err := speech.NewTTS(speech.Config{Kind: "openai", URL: r.speech.URL, Model: "tts-1"})
	if err != nil {
		t.Fatal(err)
	}
	r.svc = New(Deps{Calls: NewCallRecords(r.db.Calls), Agents: r.db.Agents, Engine: engine, STT: stt, TTS: tts, Metrics: m}, r.cfg)
}

// newCall is another call of the rig's agent.
func (r *rig) newCall() string {
	now := time.Now()
	calls, err := r.db.Calls.CreateCalls(context.Background(), []callstore.Call{{OrgID: r.org, AgentID: r.agent,
		Status: callstore.CallQueued, PhoneNumber: "+14155550100", CallerID: "+14155550001", DueAt: now, StartedAt: &now,
		Metadata: json.RawMessage(`{}`)}})
	if err != nil {
		r.t.Fatal(err)
	}
	return calls[0].ID
}

// start runs the agent on the call; the channel gets how it ended.
func (r *rig) start() <-chan dial.TalkEnd {
	t := r.t
	if r.svc == nil {
		r.build(nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan dial.TalkEnd, 1), make(chan struct{})
	go func() {
		defer close(finished)
		done <- r.svc.Talk(ctx, dial.Session{Call: dial.Call{ID: r.call}, Direction: "outbound",
			From: "+14155550001", To: "+14155550100", Media: r.media, MaxDuration: r.maxDur, Transfer: r.xfer})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Error("Talk did not return after its context ended")
		}
	})
	return done
}

// end waits for Talk to return.
func (r *rig) end(done <-chan dial.TalkEnd, within time.Duration) dial.TalkEnd {
	r.t.Helper()
	select {
	case e := <-done:
		return e
	case <-time.After(within):
		r.t.Fatalf("the agent did not end the call within %s", within)
	}
	return dial.TalkEnd{}
}

// texts queues transcripts.
func (r *rig) texts(ts ...string) {
	for _, t := range ts {
		r.speech.PushTranscripts(speechtest.Transcript{Text: t})
	}
}

// spoken is the text of every speech request.
func (r *rig) spoken() []string {
	var out []string
	for _, s := range r.speech.Spoken() {
		out = append(out, s.Input)
	}
	return out
}

// transcript is the call's transcript as logged (call.transcript events).
func (r *rig) transcript() []callstore.TranscriptEvent {
	r.t.Helper()
	evs, err := r.db.Events.ListEvents(context.Background(), eventstore.EventFilter{OrgID: r.org,
		Types: []string{callstore.EventCallTranscript}, Limit: 1000})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []callstore.TranscriptEvent
	for _, e := range evs {
		if e.Type != callstore.EventCallTranscript {
			continue
		}
		var l callstore.TranscriptEvent
		json.Unmarshal(e.Data, &l)
		out = append(out, l)
	}
	return out
}

func lines(ls []callstore.TranscriptEvent) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Role + ": " + l.Text)
		if l.Interrupted {
			b.WriteString(" [interrupted]")
		}
		b.WriteString("\n")
	}
	return b.String()
}
