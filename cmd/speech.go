package cmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/cmd/cliflags"
)

// addSpeechFlags gives serve (and doctor) the speech services voice agents
// listen and speak with; both none (the default) leaves voice agents silent.
func addSpeechFlags(c *cobra.Command, stt, tts *speech.Config) {
	f := c.Flags()
	f.Var(cliflags.OneOf(&stt.Kind, cliflags.String("AGENTD_STT", "none"), "none", "openai"), "stt",
		"speech-to-text for voice calls: none, or openai (any OpenAI-compatible /audio/transcriptions: OpenAI, Groq, speaches, whisper.cpp server, LocalAI) (env AGENTD_STT)")
	f.StringVar(&stt.URL, "stt-url", cliflags.String("AGENTD_STT_URL", ""), "base URL of the speech-to-text service, with or without /v1, e.g. http://127.0.0.1:8000/v1 (env AGENTD_STT_URL)")
	f.StringVar(&stt.Model, "stt-model", cliflags.String("AGENTD_STT_MODEL", "whisper-1"), "speech-to-text model (env AGENTD_STT_MODEL)")
	f.StringVar(&stt.APIKey, "stt-api-key", cliflags.String("AGENTD_STT_API_KEY", ""), "API key of the speech-to-text service, sent as a Bearer token (env AGENTD_STT_API_KEY)")
	f.DurationVar(&stt.Timeout, "stt-timeout", cliflags.Duration("AGENTD_STT_TIMEOUT", 10*time.Second), "time one transcription may take; slower is the service unavailable (env AGENTD_STT_TIMEOUT)")
	f.Var(cliflags.OneOf(&tts.Kind, cliflags.String("AGENTD_TTS", "none"), "none", "openai"), "tts",
		"text-to-speech for voice calls: none, or openai (any OpenAI-compatible /audio/speech: OpenAI, Groq, speaches, Kokoro-FastAPI, LocalAI) (env AGENTD_TTS)")
	f.StringVar(&tts.URL, "tts-url", cliflags.String("AGENTD_TTS_URL", ""), "base URL of the text-to-speech service, with or without /v1, e.g. http://127.0.0.1:8880/v1 (env AGENTD_TTS_URL)")
	f.StringVar(&tts.Model, "tts-model", cliflags.String("AGENTD_TTS_MODEL", "tts-1"), "text-to-speech model (env AGENTD_TTS_MODEL)")
	f.StringVar(&tts.APIKey, "tts-api-key", cliflags.String("AGENTD_TTS_API_KEY", ""), "API key of the text-to-speech service, sent as a Bearer token (env AGENTD_TTS_API_KEY)")
	f.DurationVar(&tts.Timeout, "tts-timeout", cliflags.Duration("AGENTD_TTS_TIMEOUT", 10*time.Second), "time the speech service may keep the agent waiting for audio (env AGENTD_TTS_TIMEOUT)")
}
