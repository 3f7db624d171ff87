package api

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
)

// The scripted services' own times in the browser benchmark (as in
// app/voice's BenchmarkVoiceToVoiceOwn).
const (
	benchWebSTT       = 100 * time.Millisecond
	benchWebModel     = 150 * time.Millisecond
	benchWebFirstByte = 80 * time.Millisecond
	benchWebEndpoint  = 400 * time.Millisecond
)

// agentd's own share of voice-to-voice through the browser path: a
// WebSocket client standing in for the page sends the caller's speech in
// real-time 20 ms frames to the real server; the time from its last
// spoken frame sent to the answer's first audio frame received, minus the
// endpointing silence and the scripted services' own times. The p95 and
// p50 over the turns are reported, with the whole wire-to-wire median and
// the loop's own measure (its voiceToVoiceMs minus its endpointing and
// the services' times, as the SIP benchmark reports it).
//
//	go test ./app/api -run '^$' -bench BrowserVoiceToVoice -benchtime 20x
func BenchmarkBrowserVoiceToVoice(b *testing.B) {
	sp := speechtest.New(b)
	sp.AnswerTranscripts(func(speechtest.TranscribeRequest) speechtest.Transcript {
		return speechtest.Transcript{Text: "Yes, please.", Delay: benchWebSTT}
	})
	sp.AnswerSpeech(func(speechtest.SpeakRequest) speechtest.Speech {
		return speechtest.Speech{Tone: 440, Duration: 400 * time.Millisecond, Rate: dial.SampleRate, FirstByte: benchWebFirstByte}
	})
	model := llmtest.New(b)
	model.Answer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "Sure, I have booked it for you.", Delay: benchWebModel}
	})
	e := newTestEnv(b, func(c *serveConfig) {
		c.LLM = llm.Config{Kind: "openai", URL: model.URL, Model: "scripted", Timeout: 5 * time.Second}
		c.STT = speech.Config{Kind: "openai", URL: sp.URL, Model: "whisper-1"}
		c.TTS = speech.Config{Kind: "openai", URL: sp.URL, Model: "tts-1"}
		c.Webhooks.Disabled = true
	})
	agent := e.createAgent(e.key, map[string]any{"name": "Ada", "type": "voice", "instructions": "Book what is asked.",
		"config": map[string]any{"endpointingMs": benchWebEndpoint.Milliseconds(), "silenceTimeoutSeconds": 3600}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, code, body := e.dialTalk(ctx, "/api/v2/agents/"+agent+"/talk", e.key, "")
	if code != 101 {
		b.Fatalf("talk: %d %s", code, body)
	}
	defer c.CloseNow()
	msgs := readSession(ctx, c)
	speechPCM := speechtest.Espeak(b, "Yes, please.", dial.SampleRate)
	// The end of the caller's speech: its last loud frame.
	last := 0
	for off := 0; off+dial.FrameSamples <= len(speechPCM); off += dial.FrameSamples {
		if speechtest.RMS(speechPCM[off:off+dial.FrameSamples]) > 300 {
			last = off / dial.FrameSamples
		}
	}
	silence := make([]int16, dial.FrameSamples)
	frame := func(pcm []int16) []byte {
		out := make([]byte, 2*len(pcm))
		for i, v := range pcm {
			out[2*i], out[2*i+1] = byte(v), byte(uint16(v)>>8)
		}
		return out
	}
	var wire, own, loop []float64
	tk := time.NewTicker(dial.FrameDuration)
	defer tk.Stop()
	send := func(pcm []int16) {
		if err := c.Write(ctx, websocket.MessageBinary, frame(pcm)); err != nil {
			b.Fatal(err)
		}
		<-tk.C
	}
	b.ResetTimer()
	for range b.N {
		for range 25 { // half a second of quiet before the caller speaks
			send(silence)
		}
		var spokeAt time.Time
		for i := 0; i*dial.FrameSamples < len(speechPCM); i++ {
			f := speechPCM[i*dial.FrameSamples : min((i+1)*dial.FrameSamples, len(speechPCM))]
			send(f)
			if i == last {
				spokeAt = time.Now()
			}
		}
		// Quiet until the answer's first audio, then until it is over.
		var heardAt time.Time
		quiet := 0
		for quiet < 15 {
			send(silence)
			got := false
		drain:
			for {
				select {
				case m := <-msgs:
					if m.Type == "audio" && speechtest.RMS(m.Audio) > 300 {
						got = true
						if heardAt.IsZero() {
							heardAt = time.Now()
						}
					}
					if m.Type == "latency" {
						l := m.Turn
						loop = append(loop, float64(l.VoiceToVoiceMs-l.EndpointingMs-(benchWebSTT+benchWebModel+benchWebFirstByte).Milliseconds()))
					}
					if m.Type == "end" {
						b.Fatalf("session ended: %s", m.Reason)
					}
				default:
					break drain
				}
			}
			if got || heardAt.IsZero() {
				quiet = 0
			} else {
				quiet++
			}
			if heardAt.IsZero() && time.Since(spokeAt) > 10*time.Second {
				b.Fatal("no answer within 10 s")
			}
		}
		w := heardAt.Sub(spokeAt)
		wire = append(wire, float64(w)/float64(time.Millisecond))
		own = append(own, float64(w-benchWebEndpoint-benchWebSTT-benchWebModel-benchWebFirstByte)/float64(time.Millisecond))
	}
	b.StopTimer()
	slices.Sort(own)
	slices.Sort(wire)
	slices.Sort(loop)
	if len(loop) > 0 {
		b.ReportMetric(loop[(95*len(loop)+99)/100-1], "loop-own-p95-ms")
	}
	b.ReportMetric(own[(95*len(own)+99)/100-1], "own-p95-ms")
	b.ReportMetric(own[len(own)/2], "own-p50-ms")
	b.ReportMetric(wire[len(wire)/2], "wire-v2v-p50-ms")
}
