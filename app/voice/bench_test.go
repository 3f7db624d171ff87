package voice

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
)

// turnLog is a Metrics that keeps every answer's stages.
type turnLog struct {
	mu    sync.Mutex
	turns [][5]time.Duration
}

func (l *turnLog) Turn(e, tr, m, s, v time.Duration) {
	l.mu.Lock()
	l.turns = append(l.turns, [5]time.Duration{e, tr, m, s, v})
	l.mu.Unlock()
}
func (l *turnLog) BargeIn()         {}
func (l *turnLog) CallEnded(string) {}
func (l *turnLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.turns)
}

// The scripted services' own times in the benchmarks.
const (
	benchSTT       = 100 * time.Millisecond
	benchModel     = 150 * time.Millisecond
	benchFirstByte = 80 * time.Millisecond
)

func benchRig(b *testing.B, config map[string]any) *rig {
	r := newRig(b, config, nil)
	r.speech.AnswerTranscripts(func(speechtest.TranscribeRequest) speechtest.Transcript {
		return speechtest.Transcript{Text: "Yes, please.", Delay: benchSTT}
	})
	r.speech.AnswerSpeech(func(req speechtest.SpeakRequest) speechtest.Speech {
		return speechtest.Speech{Tone: 440, Duration: 400 * time.Millisecond, Rate: dial.SampleRate, FirstByte: benchFirstByte}
	})
	r.model.Answer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "Sure, I have booked it for you.", Delay: benchModel}
	})
	return r
}

// agentd's own share of voice-to-voice: the measured time from the
// caller's last word to the agent's first audio, minus the endpointing
// silence and the scripted services' own times (speech-to-text, the
// model's first token, text-to-speech's first byte). Each iteration is one
// answered turn on a call; the p95 over them is reported.
//
//	go test ./app/voice -run '^$' -bench VoiceToVoiceOwn -benchtime 30x
func BenchmarkVoiceToVoiceOwn(b *testing.B) {
	r := benchRig(b, nil)
	log := &turnLog{}
	r.build(log)
	r.start()
	caller := voiceOf(b, "Yes, please.")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.sayWhenQuiet(caller)
		waitFor(b, 10*time.Second, "the answer", func() bool { return log.count() > i })
	}
	b.StopTimer()
	var own []float64
	for _, t := range log.turns {
		o := t[4] - t[0] - benchSTT - benchModel - benchFirstByte
		own = append(own, float64(o)/float64(time.Millisecond))
	}
	slices.Sort(own)
	b.ReportMetric(own[(95*len(own)+99)/100-1], "own-p95-ms")
	b.ReportMetric(own[len(own)/2], "own-p50-ms")
}

// Concurrent calls on one process with scripted services: each call hears
// a first message, the caller speaks, the agent answers. Reports the CPU
// time per call and whether every call was answered.
//
//	go test ./app/voice -run '^$' -bench ConcurrentCalls -benchtime 1x
func BenchmarkConcurrentCalls(b *testing.B) {
	for _, n := range []int{10, 50, 100} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			r := benchRig(b, map[string]any{"firstMessage": "Hello, this is Ada."})
			log := &turnLog{}
			r.build(log)
			caller := voiceOf(b, "Yes, please.")
			ids := make([]string, n)
			for i := range ids {
				ids[i] = r.newCall()
			}
			b.ResetTimer()
			for range b.N {
				log.turns = nil
				cpu0 := cpuTime()
				start := time.Now()
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for _, id := range ids {
					m := newTestMedia(b)
					m.say(make([]int16, 3*dial.SampleRate/2))
					m.say(caller)
					wg.Go(func() {
						if end := r.svc.Talk(ctx, dial.Session{Call: dial.Call{ID: id}, Direction: "outbound", Media: m}); end.Reason != "" {
							b.Errorf("call %s ended: %s", id, end.Reason)
						}
					})
				}
				waitFor(b, 60*time.Second, "every call answered", func() bool { return log.count() >= n })
				cancel()
				wg.Wait()
				wall := time.Since(start)
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(n), "cpu-ms/call")
				b.ReportMetric(wall.Seconds(), "wall-s")
			}
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
