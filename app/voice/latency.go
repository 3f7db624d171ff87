package voice

import (
	"slices"
	"time"
)

// TurnLatency is where one answer's time went, from the caller's last
// word to the agent's first sound.
type TurnLatency struct {
	EndpointingMs     int64 `json:"endpointingMs"`     // the silence waited for to end the turn
	TranscribeMs      int64 `json:"transcribeMs"`      // speech-to-text
	ModelFirstTokenMs int64 `json:"modelFirstTokenMs"` // request to the answer's first words
	SpeechFirstByteMs int64 `json:"speechFirstByteMs"` // the first sentence to its first audio
	VoiceToVoiceMs    int64 `json:"voiceToVoiceMs"`    // end of the caller's speech to the agent's first audio queued
}

// Latency is a call's turns and the voice-to-voice percentiles, as the
// call read shows them.
type Latency struct {
	Turns             []TurnLatency `json:"turns"`
	VoiceToVoiceP50Ms int64         `json:"voiceToVoiceP50Ms"`
	VoiceToVoiceP95Ms int64         `json:"voiceToVoiceP95Ms"`
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// summarize adds the percentiles (nearest rank) to a call's turns.
func summarize(turns []TurnLatency) Latency {
	l := Latency{Turns: turns}
	if l.Turns == nil {
		l.Turns = []TurnLatency{}
	}
	vs := make([]int64, 0, len(turns))
	for _, t := range turns {
		vs = append(vs, t.VoiceToVoiceMs)
	}
	l.VoiceToVoiceP50Ms, l.VoiceToVoiceP95Ms = percentile(vs, 50), percentile(vs, 95)
	return l
}

// percentile is the nearest-rank p-th percentile (0 for none).
func percentile(vs []int64, p int) int64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}
