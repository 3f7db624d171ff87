package cmd

import (
	"strings"
	"testing"
)

// Bad speech settings stop serve, naming the flag or the variable.
func TestBadSpeechSettingsStopServe(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--stt", "whisper"}, `--stt: invalid value "whisper": use none or openai`},
		{map[string]string{"AGENTD_TTS": "piper"}, nil, `AGENTD_TTS: invalid value "piper": use none or openai`},
		{nil, []string{"--stt", "openai"}, `--stt-url "": required`},
		{map[string]string{"AGENTD_TTS": "openai", "AGENTD_TTS_URL": "localhost:8880"}, nil, `--tts-url "localhost:8880": use an http or https base URL`},
		{nil, []string{"--tts-timeout", "5"}, `--tts-timeout: invalid duration "5"`},
		{map[string]string{"AGENTD_STT_TIMEOUT": "soon"}, nil, `AGENTD_STT_TIMEOUT: invalid duration "soon"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := serveWith(t, tc.env, tc.args...); !strings.Contains(got, tc.want) {
				t.Fatalf("stderr %q, want %q", got, tc.want)
			}
		})
	}
}

// A negative retention stops serve naming the flag.
func TestBadRecordingRetentionStopsServe(t *testing.T) {
	if got := serveWith(t, nil, "--recording-retention", "-1h"); !strings.Contains(got, "--recording-retention must not be negative") {
		t.Fatalf("stderr %q", got)
	}
}
