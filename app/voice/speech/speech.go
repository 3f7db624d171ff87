// Package speech is the voice loop's speech services: speech-to-text and
// text-to-speech through the OpenAI-compatible audio API
// (/audio/transcriptions, /audio/speech) that OpenAI, Groq and local
// servers (speaches, whisper.cpp's server, LocalAI, Kokoro-FastAPI) speak.
// The loop (app/voice) sees only these types, so a streaming provider (a
// websocket STT, chunked TTS) fits later without a rewrite.
package speech

import "errors"

// TranscribeRequest is one utterance to transcribe.
type TranscribeRequest struct {
	PCM      []int16 // 8 kHz mono
	Language string  // ISO-639-1 hint ("" lets the service detect it)
	Prompt   string  // optional context for the recogniser
}

// SpeakRequest is one piece of the agent's speech.
type SpeakRequest struct {
	Text  string
	Voice string  // the agent's config.voice ("" = the service's default)
	Speed float64 // the agent's config.speed (0 = 1.0)
}

// Stream is synthesised speech as it arrives: 8 kHz mono chunks, io.EOF
// after the last. Close releases it early (barge-in).
type Stream interface {
	Next() ([]int16, error)
	Close() error
}

// ErrUnavailable wraps every failure of a speech service to answer (down,
// timed out, 5xx, an answer that is not audio or text): the loop names the
// service in the call's failure reason.
var ErrUnavailable = errors.New("speech service unavailable")
