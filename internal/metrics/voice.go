package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Voice observes agentd's voice loop (app/voice's Metrics): where each
// answer's time went, barge-ins, and how calls ended (the failed service,
// or ok). Labels are fixed stages and reasons, never ids.
type Voice struct {
	stages *prometheus.HistogramVec // stage
	barge  prometheus.Counter
	ended  *prometheus.CounterVec // reason
}

// voiceStages are the stages of an answer's latency.
var voiceStages = []string{"endpointing", "transcribe", "model_first_token", "speech_first_byte", "voice_to_voice"}

// VoiceReasons are how a voice call can end (ok, or the service that failed).
var VoiceReasons = []string{"ok", "speech-to-text service unavailable", "text-to-speech service unavailable",
	"model service unavailable", "voice agent unavailable"}

// Voice registers and returns the voice loop's metrics.
func (r *Registry) Voice() *Voice {
	v := &Voice{
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentd_voice_turn_seconds",
			Help:    "Voice answers' latency by stage: endpointing, transcribe, model_first_token, speech_first_byte and voice_to_voice (the caller's last word to the agent's first audio).",
			Buckets: []float64{.025, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10},
		}, []string{"stage"}),
		barge: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentd_voice_barge_ins_total",
			Help: "Times a caller's speech stopped the agent's (barge-in).",
		}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentd_voice_calls_total",
			Help: "Voice calls the agent talked on, by how they ended: ok or the service that failed.",
		}, []string{"reason"}),
	}
	for _, s := range voiceStages {
		v.stages.WithLabelValues(s)
	}
	for _, reason := range VoiceReasons {
		v.ended.WithLabelValues(reason)
	}
	r.reg.MustRegister(v.stages, v.barge, v.ended)
	return v
}

// Turn records one answer's stages.
func (v *Voice) Turn(endpointing, transcribe, modelFirstToken, speechFirstByte, voiceToVoice time.Duration) {
	for i, d := range []time.Duration{endpointing, transcribe, modelFirstToken, speechFirstByte, voiceToVoice} {
		v.stages.WithLabelValues(voiceStages[i]).Observe(d.Seconds())
	}
}

// BargeIn counts a barge-in.
func (v *Voice) BargeIn() { v.barge.Inc() }

// CallEnded counts a call's end; reason "" is ok, an unknown one counts
// as itself only if listed (labels stay bounded).
func (v *Voice) CallEnded(reason string) {
	if reason == "" {
		reason = "ok"
	}
	for _, r := range VoiceReasons {
		if r == reason {
			v.ended.WithLabelValues(reason).Inc()
			return
		}
	}
}
