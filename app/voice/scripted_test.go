package voice

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial"
)

// scriptedSTT answers transcripts from a script, in order, and records
// what it was sent.
type scriptedSTT struct {
	mu    sync.Mutex
	texts []string
	delay time.Duration
	err   error
	got   []speech.TranscribeRequest
}

func (s *scriptedSTT) Transcribe(ctx context.Context, req speech.TranscribeRequest) (string, error) {
	s.mu.Lock()
	s.got = append(s.got, req)
	delay, err := s.delay, s.err
	var text string
	if len(s.texts) > 0 {
		text, s.texts = s.texts[0], s.texts[1:]
	}
	s.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if err != nil {
		return "", fmt.Errorf("%w: %v", speech.ErrUnavailable, err)
	}
	return text, nil
}

func (s *scriptedSTT) requests() []speech.TranscribeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]speech.TranscribeRequest(nil), s.got...)
}

// scriptedTTS speaks a 440 Hz tone, 200 ms a word, in 40 ms chunks.
type scriptedTTS struct {
	mu        sync.Mutex
	firstByte time.Duration
	err       error
	got       []speech.SpeakRequest
}

const wordSamples = dial.SampleRate / 5

func (s *scriptedTTS) Speak(ctx context.Context, req speech.SpeakRequest) (speech.Stream, error) {
	s.mu.Lock()
	s.got = append(s.got, req)
	err, delay := s.err, s.firstByte
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", speech.ErrUnavailable, err)
	}
	n := len(strings.Fields(req.Text)) * wordSamples
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(6000 * math.Sin(2*math.Pi*440*float64(i)/dial.SampleRate))
	}
	return &toneStream{ctx: ctx, pcm: pcm, delay: delay}, nil
}

func (s *scriptedTTS) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.got {
		out = append(out, r.Text)
	}
	return out
}

type toneStream struct {
	ctx   context.Context
	pcm   []int16
	delay time.Duration
}

func (t *toneStream) Next() ([]int16, error) {
	if t.delay > 0 {
		select {
		case <-time.After(t.delay):
		case <-t.ctx.Done():
			return nil, t.ctx.Err()
		}
		t.delay = 0
	}
	if len(t.pcm) == 0 {
		return nil, io.EOF
	}
	n := min(len(t.pcm), 320)
	out := t.pcm[:n]
	t.pcm = t.pcm[n:]
	return out, nil
}

func (t *toneStream) Close() error { return nil }
