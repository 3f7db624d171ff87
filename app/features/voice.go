package features

import (
	"context"

	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/app/voice"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/app/webcall"
)

// openVoice builds the voice loop when both speech services are set: it
// then speaks on every answered SIP call (the dialer's Talker). Without
// them calls stay as they were: answered, silent.
func (s *Set) openVoice(ctx context.Context, cfg Config) error {
	if err := s.openSpeech(ctx, cfg); err != nil {
		return err
	}
	d := webcall.Deps{Agents: s.Stores.Agents, Calls: s.Stores.Calls, Widget: s.Widget, Log: s.log}
	if s.Voice != nil {
		d.Talker = s.Voice
	}
	s.WebCalls = webcall.New(d, 0)
	return nil
}

// openSpeech builds the loop over the speech services.
func (s *Set) openSpeech(_ context.Context, cfg Config) error {
	stt, err := speech.NewSTT(cfg.STT)
	if err != nil {
		return err
	}
	tts, err := speech.NewTTS(cfg.TTS)
	if err != nil {
		return err
	}
	if stt == nil || tts == nil {
		return nil
	}
	d := voice.Deps{Calls: voice.NewCallRecords(s.Stores.Calls), Agents: s.Stores.Agents, Engine: s.Conversations,
		STT: stt, TTS: tts, Metrics: cfg.VoiceMetrics, Log: s.log}
	if s.Recordings.Enabled() {
		d.Recordings = recorder{s.Recordings}
	}
	s.Voice = voice.New(d, voice.Config{})
	return nil
}

// recorder is the recordings service as the loop starts a call's file.
type recorder struct{ svc *recordings.Service }

func (r recorder) Start(orgID, callID string) (voice.Recording, error) {
	f, err := r.svc.Start(orgID, callID)
	if err != nil {
		return nil, err
	}
	return f, nil
}
