package speech

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/wav"
)

// FuzzSpeechAnswer feeds arbitrary answer bodies, as a TTS service might
// send, through the sniffing, WAV/PCM decoding and resampling: an error or
// audio, never a panic or a hang.
func FuzzSpeechAnswer(f *testing.F) {
	f.Add(wav.Encode(wav.Format{Rate: 22050, Channels: 1}, []int16{1, 2, 3, 4, 5}), "audio/wav")
	f.Add(wav.Encode(wav.Format{Rate: 48000, Channels: 2}, []int16{1, 2, 3}), "audio/wav")
	f.Add([]byte{1, 2, 3, 4, 5}, "audio/pcm")
	f.Add([]byte{1, 2, 3, 4, 5, 6}, "audio/L16; rate=16000; channels=2")
	f.Add([]byte("ID3\x04"), "audio/mpeg")
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEfmt "), "")
	tts, err := NewTTS(Config{Kind: "openai", URL: "http://127.0.0.1:9", Timeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, ctype string) {
		ctx, cancel := context.WithCancel(context.Background())
		s := &ttsStream{t: tts, parent: context.Background(), ctx: ctx, cancel: cancel,
			body: io.NopCloser(bytes.NewReader(body))}
		s.watch = time.AfterFunc(time.Hour, s.expire)
		defer s.Close()
		if err := s.open(ctype); err != nil {
			return
		}
		n := 0
		for {
			c, err := s.Next()
			n += len(c)
			if err != nil {
				break
			}
		}
		if n > len(body) { // 8 kHz never has more samples than the bytes of any rate above 4 kHz
			if r := s.rs; r != nil && r.p >= r.q {
				t.Fatalf("%d samples out of %d bytes", n, len(body))
			}
		}
	})
}
