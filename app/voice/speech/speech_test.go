package speech_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/speechtest"
)

func newTTS(t *testing.T, url string, mod func(*speech.Config)) *speech.TTS {
	t.Helper()
	cfg := speech.Config{Kind: "openai", URL: url, Model: "tts-test", APIKey: "sk-tts-secret", Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	tts, err := speech.NewTTS(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tts
}

func newSTT(t *testing.T, url string, timeout time.Duration) *speech.STT {
	t.Helper()
	stt, err := speech.NewSTT(speech.Config{Kind: "openai", URL: url, Model: "whisper-test", APIKey: "sk-stt-secret", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return stt
}

// readAll drains a stream, counting its chunks.
func readAll(t *testing.T, s speech.Stream) ([]int16, int) {
	t.Helper()
	defer s.Close()
	var out []int16
	chunks := 0
	for {
		c, err := s.Next()
		if err == io.EOF {
			return out, chunks
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c...)
		chunks++
	}
}

// goertzel is the amplitude of the hz component of pcm at rate.
func goertzel(pcm []int16, hz float64, rate int) float64 {
	w := 2 * math.Pi * hz / float64(rate)
	c := 2 * math.Cos(w)
	var s1, s2 float64
	for _, v := range pcm {
		s1, s2 = float64(v)+c*s1-s2, s1
	}
	p := s1*s1 + s2*s2 - c*s1*s2
	return 2 * math.Sqrt(p) / float64(len(pcm))
}

func TestSpeakFormats(t *testing.T) {
	srv := speechtest.New(t)
	cases := []struct {
		name   string
		format string // asked
		answer speechtest.Speech
		secs   float64
	}{
		{"espeak wav at 22050", "wav", speechtest.Speech{Text: "Hello, this is agentd speaking."}, 0},
		{"pcm at 24 kHz", "pcm", speechtest.Speech{Tone: 440, Duration: time.Second}, 1},
		{"stereo wav at 48 kHz in odd chunks", "wav", speechtest.Speech{Tone: 440, Duration: time.Second, Rate: 48000, Channels: 2, Chunk: 333}, 1},
		{"sized wav at 16 kHz", "wav", speechtest.Speech{Tone: 440, Duration: time.Second, Rate: 16000, Sized: true}, 1},
		{"asked pcm, answered wav", "pcm", speechtest.Speech{Tone: 440, Duration: time.Second, Format: "wav", Rate: 22050}, 1},
		{"asked wav, answered pcm", "wav", speechtest.Speech{Tone: 440, Duration: time.Second, Format: "pcm"}, 1},
		{"8 kHz passes through", "wav", speechtest.Speech{Tone: 440, Duration: time.Second, Rate: 8000}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tts := newTTS(t, srv.URL, func(c *speech.Config) { c.Format = tc.format })
			srv.PushSpeech(tc.answer)
			st, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "Hello, this is agentd speaking."})
			if err != nil {
				t.Fatal(err)
			}
			pcm, chunks := readAll(t, st)
			if tc.secs == 0 {
				tc.secs = float64(len(speechtest.Espeak(t, "Hello, this is agentd speaking.", 0))) / 22050
			}
			want := int(tc.secs * 8000)
			if len(pcm) < want-2 || len(pcm) > want+2 {
				t.Fatalf("%d samples at 8 kHz, want %d", len(pcm), want)
			}
			if rms := speechtest.RMS(pcm); rms < 500 {
				t.Fatalf("rms %.0f: no speech came through", rms)
			}
			if tc.answer.Tone != 0 {
				if a := goertzel(pcm[800:len(pcm)-800], 440, 8000); math.Abs(a-8000) > 200 {
					t.Fatalf("440 Hz at amplitude %.0f, want 8000", a)
				}
			}
			if got := srv.Spoken(); got[len(got)-1].ResponseFormat != tc.format {
				t.Fatalf("asked %q", got[len(got)-1].ResponseFormat)
			}
			_ = chunks
		})
	}
}

func TestSpeakStreamsAsTheBodyArrives(t *testing.T) {
	srv := speechtest.New(t)
	tts := newTTS(t, srv.URL, nil)
	// 2 s of tone in 100 ms chunks, 50 ms apart: the first chunk is out
	// long before the answer ends.
	srv.PushSpeech(speechtest.Speech{Tone: 300, Duration: 2 * time.Second, Chunk: 4800, ChunkDelay: 50 * time.Millisecond, FirstByte: 100 * time.Millisecond})
	start := time.Now()
	st, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "a long sentence"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Next()
	if err != nil || len(first) == 0 {
		t.Fatalf("first chunk: %d %v", len(first), err)
	}
	firstAt := time.Since(start)
	if firstAt < 100*time.Millisecond {
		t.Fatalf("first chunk after %v, before the server's first byte", firstAt)
	}
	rest, chunks := readAll(t, st)
	if chunks < 5 || time.Since(start)-firstAt < 500*time.Millisecond {
		t.Fatalf("%d chunks; the stream waited for the whole body", chunks)
	}
	if n := len(first) + len(rest); n < 15990 || n > 16010 {
		t.Fatalf("%d samples, want 16000", n)
	}
}

func TestSpeakCloseStopsTheAnswer(t *testing.T) {
	srv := speechtest.New(t)
	tts := newTTS(t, srv.URL, nil)
	srv.PushSpeech(speechtest.Speech{Tone: 300, Duration: 5 * time.Second, ChunkDelay: 100 * time.Millisecond})
	st, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "interrupted"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(); err != nil {
		t.Fatal(err)
	}
	st.Close() // barge-in
	if _, err := st.Next(); err == nil || errors.Is(err, speech.ErrUnavailable) {
		t.Fatalf("Next after Close: %v", err)
	}
	testkit.Eventually(t, 2*time.Second, func() bool { return srv.Canceled.Load() != 0 }, "the server kept sending after Close")
}

// A 1 kHz tone at 24 kHz comes out a 1 kHz tone at 8 kHz; a 5 kHz tone,
// above the 4 kHz Nyquist, does not fold back to 3 kHz.
func TestResamplingQuality(t *testing.T) {
	srv := speechtest.New(t)
	tts := newTTS(t, srv.URL, func(c *speech.Config) { c.Format = "pcm" })
	speak := func(hz float64) []int16 {
		srv.PushSpeech(speechtest.Speech{Tone: hz, Duration: time.Second})
		st, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "tone"})
		if err != nil {
			t.Fatal(err)
		}
		pcm, _ := readAll(t, st)
		return pcm[400 : len(pcm)-400] // away from the edges
	}
	pcm := speak(1000)
	a := goertzel(pcm, 1000, 8000)
	if math.Abs(a-8000) > 80 {
		t.Fatalf("1 kHz amplitude %.1f, want 8000", a)
	}
	// What is not the tone (noise, aliases, distortion) is under -50 dB.
	var resid float64
	for i, v := range pcm {
		d := float64(v) - a*math.Sin(2*math.Pi*1000*float64(i+400)/8000)
		resid += d * d
	}
	resid = math.Sqrt(resid / float64(len(pcm)))
	if db := 20 * math.Log10(resid/(a/math.Sqrt2)); db > -50 {
		t.Fatalf("residual at %.1f dB of the tone", db)
	}
	alias := speak(5000)
	if rms := speechtest.RMS(alias); 20*math.Log10(rms/(8000/math.Sqrt2)) > -50 {
		t.Fatalf("5 kHz tone folds back at rms %.1f (%.1f dB)", rms, 20*math.Log10(rms/(8000/math.Sqrt2)))
	}
}

func TestSpeakSendsTheRequest(t *testing.T) {
	srv := speechtest.New(t)
	tts := newTTS(t, strings.TrimSuffix(srv.URL, "/v1"), nil) // the base URL without /v1 works too
	srv.PushSpeech(speechtest.Speech{Tone: 300, Duration: 100 * time.Millisecond})
	st, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "Guten Tag", Voice: "alloy", Speed: 1.25})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, st)
	got := srv.Spoken()[0]
	if got.Model != "tts-test" || got.Input != "Guten Tag" || got.Voice != "alloy" || got.Speed != 1.25 || got.ResponseFormat != "wav" {
		t.Fatalf("request %+v", got)
	}
	if got.Header.Get("Authorization") != "Bearer sk-tts-secret" {
		t.Fatalf("authorization %q", got.Header.Get("Authorization"))
	}
}

func TestSpeakFailures(t *testing.T) {
	srv := speechtest.New(t)
	refused := "http://" + closedAddr(t) + "/v1"
	cases := []struct {
		name   string
		url    string
		answer speechtest.Speech
		want   string
	}{
		{"503", srv.URL, speechtest.Speech{Status: 503}, "text-to-speech service unavailable: HTTP 503: scripted failure"},
		{"hang", srv.URL, speechtest.Speech{Hang: true}, "text-to-speech service unavailable: no audio within 300ms"},
		{"mp3", srv.URL, speechtest.Speech{Format: "mp3"}, "text-to-speech service unavailable: answered audio/mpeg, not wav or pcm audio"},
		{"refused", refused, speechtest.Speech{}, "text-to-speech service unavailable: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tts := newTTS(t, tc.url, func(c *speech.Config) { c.Timeout = 300 * time.Millisecond })
			if tc.url == srv.URL {
				srv.PushSpeech(tc.answer)
			}
			_, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "hi"})
			if !errors.Is(err, speech.ErrUnavailable) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrUnavailable %q", err, tc.want)
			}
			if speech.Reason(err) != "text-to-speech service unavailable" {
				t.Fatalf("reason %q", speech.Reason(err))
			}
			if strings.Contains(err.Error(), "sk-tts-secret") {
				t.Fatal("the key is in the error")
			}
		})
	}
	// The body stopping mid-answer for longer than the timeout fails the stream.
	tts := newTTS(t, srv.URL, func(c *speech.Config) { c.Timeout = 300 * time.Millisecond })
	srv.PushSpeech(speechtest.Speech{Tone: 300, Duration: time.Second, ChunkDelay: 2 * time.Second})
	st, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		_, err := st.Next()
		if err == nil {
			continue
		}
		if !errors.Is(err, speech.ErrUnavailable) || !strings.Contains(err.Error(), "no audio within 300ms") {
			t.Fatalf("stalled body: %v", err)
		}
		break
	}
}

func TestTranscribe(t *testing.T) {
	srv := speechtest.New(t)
	stt := newSTT(t, srv.URL+"/", 5*time.Second)
	srv.PushTranscripts(speechtest.Transcript{Text: " I would like to book a table. "})
	utterance := speechtest.Espeak(t, "I would like to book a table", 8000)
	text, err := stt.Transcribe(context.Background(), speech.TranscribeRequest{PCM: utterance, Language: "en-US", Prompt: "Restaurant"})
	if err != nil || text != "I would like to book a table." {
		t.Fatalf("%q %v", text, err)
	}
	got := srv.Heard()[0]
	if got.Model != "whisper-test" || got.Language != "en" || got.ResponseFormat != "json" || got.Prompt != "Restaurant" {
		t.Fatalf("request %+v", got)
	}
	if got.Format.Rate != 8000 || got.Format.Channels != 1 || len(got.PCM) != len(utterance) || got.RMS < 500 {
		t.Fatalf("audio %v, %d samples, rms %.0f", got.Format, len(got.PCM), got.RMS)
	}
	if got.Header.Get("Authorization") != "Bearer sk-stt-secret" {
		t.Fatal("no key")
	}
	// No language: the field is left out, the service detects it.
	stt.Transcribe(context.Background(), speech.TranscribeRequest{PCM: utterance[:800], Language: "not a language"})
	if got := srv.Heard()[1]; got.Language != "" || got.Duration != 100*time.Millisecond {
		t.Fatalf("language %q, duration %v", got.Language, got.Duration)
	}
	// A rule on the received audio: silence is heard as nothing.
	srv.AnswerTranscripts(func(r speechtest.TranscribeRequest) speechtest.Transcript {
		if r.RMS < 100 {
			return speechtest.Transcript{Text: ""}
		}
		return speechtest.Transcript{Text: "speech"}
	})
	if text, _ := stt.Transcribe(context.Background(), speech.TranscribeRequest{PCM: make([]int16, 8000)}); text != "" {
		t.Fatalf("silence heard as %q", text)
	}
}

func TestTranscribeFailures(t *testing.T) {
	srv := speechtest.New(t)
	cases := []struct {
		name   string
		url    string
		answer speechtest.Transcript
		want   string
	}{
		{"503", srv.URL, speechtest.Transcript{Status: 503}, "speech-to-text service unavailable: HTTP 503"},
		{"hang", srv.URL, speechtest.Transcript{Hang: true}, "speech-to-text service unavailable: no answer within 300ms"},
		{"refused", "http://user:pa55word@" + closedAddr(t), speechtest.Transcript{}, "speech-to-text service unavailable: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stt := newSTT(t, tc.url, 300*time.Millisecond)
			if tc.url == srv.URL {
				srv.PushTranscripts(tc.answer)
			}
			_, err := stt.Transcribe(context.Background(), speech.TranscribeRequest{PCM: make([]int16, 800)})
			if !errors.Is(err, speech.ErrUnavailable) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrUnavailable %q", err, tc.want)
			}
			if speech.Reason(err) != "speech-to-text service unavailable" {
				t.Fatalf("reason %q", speech.Reason(err))
			}
			if strings.Contains(err.Error(), "pa55word") || strings.Contains(err.Error(), "sk-stt-secret") {
				t.Fatalf("a credential is in the error: %v", err)
			}
		})
	}
	// The caller hanging up is not the service failing.
	srv.PushTranscripts(speechtest.Transcript{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := newSTT(t, srv.URL, 5*time.Second).Transcribe(ctx, speech.TranscribeRequest{PCM: make([]int16, 800)})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, speech.ErrUnavailable) {
		t.Fatalf("caller's deadline: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, kind := range []string{"", "none"} {
		if s, err := speech.NewSTT(speech.Config{Kind: kind}); s != nil || err != nil {
			t.Fatalf("stt %q: %v %v", kind, s, err)
		}
		if s, err := speech.NewTTS(speech.Config{Kind: kind}); s != nil || err != nil {
			t.Fatalf("tts %q: %v %v", kind, s, err)
		}
	}
	bad := []struct {
		cfg  speech.Config
		tts  bool
		want string
	}{
		{speech.Config{Kind: "whisper"}, false, `--stt "whisper": use openai or none`},
		{speech.Config{Kind: "openai"}, false, `--stt-url "": required`},
		{speech.Config{Kind: "openai", URL: "ftp://x"}, true, `--tts-url "ftp://x": use an http or https base URL`},
		{speech.Config{Kind: "openai", URL: "http://x", Timeout: -1}, true, `--tts-timeout must not be negative`},
	}
	for _, b := range bad {
		var err error
		if b.tts {
			_, err = speech.NewTTS(b.cfg)
		} else {
			_, err = speech.NewSTT(b.cfg)
		}
		if err == nil || !strings.HasPrefix(err.Error(), b.want) {
			t.Errorf("%+v: %v, want %q", b.cfg, err, b.want)
		}
	}
}

func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Barge-in closes the stream from another goroutine while Next waits for
// the network: Next returns at once, not as the service failing.
func TestCloseWhileNextWaits(t *testing.T) {
	srv := speechtest.New(t)
	tts := newTTS(t, srv.URL, nil)
	srv.PushSpeech(speechtest.Speech{Tone: 300, Duration: 5 * time.Second, ChunkDelay: 3 * time.Second})
	st, err := tts.Speak(context.Background(), speech.SpeakRequest{Text: "long"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := st.Next(); err != nil {
				done <- err
				return
			}
		}
	}()
	// Next is then blocked on the chunk held back 3 s: no event shows a
	// goroutine blocked in a read, so give it that moment.
	time.Sleep(200 * time.Millisecond)
	closed := time.Now()
	st.Close()
	select {
	case err := <-done:
		if errors.Is(err, speech.ErrUnavailable) || err == io.EOF {
			t.Fatalf("Next after a concurrent Close: %v", err)
		}
		if d := time.Since(closed); d > 500*time.Millisecond {
			t.Fatalf("Next returned %v after Close", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Next still waits after Close")
	}
}
