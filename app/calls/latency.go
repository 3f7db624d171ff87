package calls

import (
	"context"
	"encoding/json"
)

// Latency is where the time of each answer of agentd's own voice loop
// went (app/voice), and the call's voice-to-voice percentiles.
type Latency struct {
	Turns             json.RawMessage `json:"turns"` // [{endpointingMs, transcribeMs, modelFirstTokenMs, speechFirstByteMs, voiceToVoiceMs}]
	VoiceToVoiceP50Ms int64           `json:"voiceToVoiceP50Ms"`
	VoiceToVoiceP95Ms int64           `json:"voiceToVoiceP95Ms"`
}

// withLatency adds the call's latency to its record when it has one.
func (s *Service) withLatency(ctx context.Context, rec Record) (Record, error) {
	l, ok, err := s.db.Calls.GetCallLatency(ctx, rec.ID)
	if err != nil || !ok {
		return rec, err
	}
	rec.Latency = &Latency{Turns: l.Turns, VoiceToVoiceP50Ms: l.P50Ms, VoiceToVoiceP95Ms: l.P95Ms}
	return rec, nil
}
