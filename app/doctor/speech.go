package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/agentd/agentd/app/voice/speech"
)

const silent = "none: voice agents stay silent on calls until both --stt and --tts are set"

// stt transcribes half a second of silence: the service answers, the
// model name and the key are accepted.
func (r *run) stt(ctx context.Context) (Status, string) {
	if r.in.STTErr != nil {
		return Fail, oneLine(r.in.STTErr)
	}
	if r.in.STT == nil {
		return Warn, silent
	}
	start := time.Now()
	text, err := r.in.STT.Transcribe(ctx, speechRequest())
	if err != nil {
		return Fail, oneLine(err)
	}
	return OK, fmt.Sprintf("%s transcribed half a second of silence in %s (%q)", r.in.STT.Host(), since(start), clip(text))
}

// tts speaks one word and reads its first audio.
func (r *run) tts(ctx context.Context) (Status, string) {
	if r.in.TTSErr != nil {
		return Fail, oneLine(r.in.TTSErr)
	}
	if r.in.TTS == nil {
		return Warn, silent
	}
	start := time.Now()
	st, err := r.in.TTS.Speak(ctx, speakRequest())
	if err != nil {
		return Fail, oneLine(err)
	}
	defer st.Close()
	if _, err := st.Next(); err != nil {
		return Fail, oneLine(err)
	}
	return OK, fmt.Sprintf("%s spoke its first audio in %s", r.in.TTS.Host(), since(start))
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func speechRequest() speech.TranscribeRequest {
	return speech.TranscribeRequest{PCM: make([]int16, 4000)}
}

func speakRequest() speech.SpeakRequest { return speech.SpeakRequest{Text: "Hello."} }
